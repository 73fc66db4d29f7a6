"""One renderer for a report: :mod:`.view` words every section once (the view model), and each
view draws those sections: :mod:`.terminal` (rich), :mod:`.html` (one self-contained file) and
the served page (:mod:`factscout.serve`, the same view model and Jinja macros). A section shown
in one view is shown in all; ``tests/render/test_sections.py`` checks it against the report schema.
"""
