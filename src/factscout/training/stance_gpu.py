"""``python -m factscout.training.stance_gpu``: the documented command that runs
:func:`factscout.training.stance.gpu.main` (scripts/gpu-stance.sh and the model cards name it)."""

from factscout.training.stance.gpu import main

if __name__ == "__main__":
    raise SystemExit(main())
