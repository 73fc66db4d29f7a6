"""Downloading the check-worthiness data (only ever called explicitly by a user: ``factscout data
download claimbuster``): ClaimBuster's files and the CheckThat! 2021/2022 task 1 English zips of
the organisers' repositories at pinned commits, extracted into the layout of ``checkworthy/``
(:mod:`factscout.datasets.checkworthy` reads it) and each file checked against its published sha256
(:data:`SHA256_TABLE`, from each folder's SOURCE.txt)."""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from factscout.datasets.base import fetch, github_raw
from factscout.errors import InputError

FOLDER = "checkworthy"
CB_REPO, CB_COMMIT = (
    "matsbratvold/Checkworthiness-Detection-with-Open-Source-LLMs",
    ("66964b538b06fe1728b0d48897a635727f6bbc57"),
)
CT_REPO, CT_COMMIT = "TonyTTTTT/Claim-Detection-in-Tweets", "f9b1c838db62d74239d53cae560abc09d3bbec20"
CT21 = "clef2021-checkthat-lab/task1"
CT22 = "clef2022-checkthat-lab/task1/data/subtasks-english"

SHA256_TABLE = """
claimbuster/crowdsourced.csv 11026f911d96476daed6c9a83ba0fbf3555598c04ef9b7fa567eeadee8693843
claimbuster/groundtruth.csv 64890c51e1092fec0d361ca770b3efccc0c889dd569b46b35922d94c44fa99ea
ct21_1a_en_tweets/dataset_dev_v1_english.tsv b3bb25415a98ac2ea21538f6ecbf797c8156e8a50e6633e938e5df5307493e3d
ct21_1a_en_tweets/dataset_test_english.tsv 6ab0e5ae4d30e6947a42096432e70e3e569f672c9456746c6cded75092f5a15c
ct21_1a_en_tweets/dataset_train_v1_english.tsv e2db4251a20af3f7b11acfd7a4d0e9d539863d8bd83e02f1268bcc7fc3d9bcc4
ct22_1a_en_tweets/CT22_english_1A_checkworthy_dev.tsv e341d06059ce7bc459e346a3b6dc63b0b196809593491024a651f2052e83b26d
ct22_1a_en_tweets/CT22_english_1A_checkworthy_dev_test.tsv c65ba5713dceb407de4d39de4f47eaf47c34215499005642c44ddb42d27181dc
ct22_1a_en_tweets/CT22_english_1A_checkworthy_test_gold.tsv 1bca79b20f80d1f2445c4580216ff7520d63f747d701920c3e5a68349ce8480a
ct22_1a_en_tweets/CT22_english_1A_checkworthy_train.tsv c48a9e17af37811b217da7344ce384cbafb4c0d1b3d21fc2afdc29eafe8c419d
ct22_1b_en_tweets/CT22_english_1B_claim_dev.tsv 6a5f60c019abc7bfdacb4ca26897e50986e4b7785c5c27199adc9ef783b6ac94
ct22_1b_en_tweets/CT22_english_1B_claim_dev_test.tsv 6a1c566b78a353ec184a06a68ef920c57d03f2eab1086b158f6a7f0eef0e6fc0
ct22_1b_en_tweets/CT22_english_1B_claim_test_gold.tsv 169e6910a8ac69f9da0a08adea0f9cb8669306b592f58dcb97ae348030a4b6eb
ct22_1b_en_tweets/CT22_english_1B_claim_train.tsv ee5acac643e8140613ba03b13d5f23ee43e50a02b318216b87a1883733c3d4c5
ct21_1b_en_debates/train/20121023_third_presidential_debate.tsv af2133f1bfc94fa741b767d1db82f8041e687eddbc1c05f1c55c6b2c39d81763
ct21_1b_en_debates/train/20150805_GOP_Cleveland.tsv ab0ac76b2764eac06719cba2f86f22268390417bbc138374bf7584d0ef5694a2
ct21_1b_en_debates/train/20151013_democrats_las_Vegas.tsv af23e663a752e9d5b0f2632eed655ccf0ec00ade6698e49c4894d6d60a632bf9
ct21_1b_en_debates/train/20151028_GOP_boulder.tsv 501b7a49710291d1c45feba7b0e6936625ffc4ce3a95b09a762ef2fed63d7c9d
ct21_1b_en_debates/train/20151110_GOP_Milwaukee.tsv 7f76efe6a82a4f4ffb36a998cf47deb8f99925870e708a158c45f911d358b41b
ct21_1b_en_debates/train/20160112_Obama_state_of_the_union.tsv 51a707b2a8c0ab9f44c70f30f4c23c9256892a98eaed66d937b49fef588b68f7
ct21_1b_en_debates/train/20160115_GOP_Charleston.tsv 52d2fe2c1d6532b26afb600070057f521e963b5f59168c4e2f33c8bd0e541829
ct21_1b_en_debates/train/20160117_democrats_Charleston.tsv c9b98ae38161dd3c83534eb7d22c419b1dfb072a3b475a2d5f81a5a9c6759824
ct21_1b_en_debates/train/20160204_democrats_new_Hampshire.tsv e463e62b2c474a84679d94b42616a4f31a4f54a0ec0a6aa4a8200418cbd2d459
ct21_1b_en_debates/train/20160211_democrats_Milwaukee.tsv 3b754725920ca5e5590bf4a6f42bfbc5a52c1f90d96df9bc37fc8a24723d84ff
ct21_1b_en_debates/train/20160213_GOP_Greenville.tsv f4106c9d6933b2d1517c4238b5038fe34ec4e9a28e2af05b8b05a78447e377cb
ct21_1b_en_debates/train/20160225_GOP_Texas.tsv b795456d452222334493ad8abdd06122618d8ec8fecbab41bd4fe17d4a0e8cfe
ct21_1b_en_debates/train/20160303_GOP_Michigan.tsv fcb9e32d95d98fe71464583b43cf4fc6fb54d703f81577a418c50b6fdc0e6add
ct21_1b_en_debates/train/20160309_democrats_Miami.tsv fd39ea1b139ee4760443606ccbdabd3f8d906226ea66f191b6dc05925984e9d2
ct21_1b_en_debates/train/20160311_GOP_Miami.tsv 7b3152bad4575d759c82baeffa054cf25fd51aa6e23989fa04e9b8ef866f8fec
ct21_1b_en_debates/train/20160329_Kasich_Milwaukee.tsv 271059762c13a514f3b852d8add07b1ae0477834364d8dc7a1e2dc55f51929a8
ct21_1b_en_debates/train/20160331_Cruz_Milwaukee.tsv 57aadf7c476c6422cb5fa2b578a686be5767ecbcaf4b0d18d7bc23fab1766e7f
ct21_1b_en_debates/train/20160401_Trump_Milwaukee.tsv ac55d26ce04c2ec9aa9e9553813bd7e1006b3cc626addd2855d3a34d90fa2145
ct21_1b_en_debates/train/20160404_Hillary_meet_the_press.tsv cf15ac607daac04aaa1493e63da9aba2ef18fb6b51fe7f3ab488088dc6904fef
ct21_1b_en_debates/train/20160415_NY_democratic_debate.tsv ad46b49873e0c67dfe7107a6470109e7c7e6bf950a2cdd7a8e02a956547ab9d9
ct21_1b_en_debates/train/20160417_meet_the_press.tsv c53edaf80d4013ac5be832d06bdaeeffb0559937213f602db7986e134fda3880
ct21_1b_en_debates/train/20160424_meet_the_press.tsv b557e2d33a223d44238e005fae51fc157c5615bcdc94f6cb9358f270b05a6583
ct21_1b_en_debates/train/20160508_Trump_meet_the_press.tsv 1196076b653d909df50198125f5aa795259a04ba4bb9de33ec29c99575458f6f
ct21_1b_en_debates/train/20160529_Sanders_MeetThePress.tsv 1109258c3f29c417795fbc1daef15d4cdd7ec2ffbf85ff05ee649ba5ae8e43ab
ct21_1b_en_debates/train/20160622_Trump_NY_Soho.tsv 4c22b041921f7f67453e8ae2246b4d19fdea3a06560e7091d14d3c803b8577da
ct21_1b_en_debates/train/20160721_Trump_draft_RNC.tsv 4b7fac26abc9bf5a0c05f7bbd3d6c699dd78fe0d7c20c083e4b6ebe681f0a840
ct21_1b_en_debates/train/20160901_Trump_immigration_Phoenix.tsv 03e8f41d864f37392ea8630bc24d99a5c6002003518a36b307954b8fa1eed9f1
ct21_1b_en_debates/train/20160907_NBC_commander_in_chief_forum.tsv 06745d3bb79fa4416c2de61c287cbc1a622186550e7eff877182eef2f9e0a437
ct21_1b_en_debates/train/20160926_first_presidential_debate.tsv 29b6884940a06d4bc6f1367ae8b240ad253dcb7e131113866af7ae6b2afee828
ct21_1b_en_debates/train/20161005_vice_presidential_debate.tsv 40cf4b8f0653b174fbd3e7a5983f391c401896ab9c97accba74698c6c719ac6d
ct21_1b_en_debates/train/20161010_second_presidential_debate.tsv 3420f76e6f7a255a4df40eb6667aef0016abcb8ef06f29de762f8730c8453b5e
ct21_1b_en_debates/train/20161019_third_presidential_debate.tsv 5ad270a1f2cfa0c18b67aa831d2d52bd1d41c5f53c1b479fb6182fbf0492eb0e
ct21_1b_en_debates/train/20170111_Trump_press_conference.tsv 2617203679cf7779bd668b53ef0c505f52714d0ded072552e883a17b6b975119
ct21_1b_en_debates/train/20170120_Trump_inauguration.tsv e059217d1866e7d049f1340462423c71a3c98c737f916c18e80a39162162861f
ct21_1b_en_debates/train/20170126_Trump_ABC.tsv eb0ec597a8ac435d515f20e0dae31862841483bac912e756cebee961d1b58169
ct21_1b_en_debates/train/20170205_Trump_Oreilly.tsv 9021bd6b98ef8560596148bf00ca476f7b25ef47a5c34e355f9f7898a313fe51
ct21_1b_en_debates/train/20170207_Sanders_Cruz_healthcare_debate.tsv ba39f78e1f48692262229387d69b4670b974bb32128520c65d0fe2d1558f8809
ct21_1b_en_debates/train/20170216_Trump_press_conference.tsv 92e7ca3dcde898fa77159440991f83ea3b64247c4f9b08572cfab8f5f9428df7
ct21_1b_en_debates/train/20170218_Trump_Florida.tsv d5fbf559c27ed8fd695b1f48ee7829efee9084129c34b7dd922429574c5db348
ct21_1b_en_debates/train/20170224_Trump_CPAC.tsv 4a3afb9b42334e05ac37801193b33c7b66a4625d95b717dc8319c6a939f4a6c9
ct21_1b_en_debates/dev/20170228_Trump_Congress_joint_session.tsv 0e68f27f3e4a0c9dd2c07d69d7f7552f116a401108f21f2a90553d8a58b82dd1
ct21_1b_en_debates/dev/20170315_Trump_Nashville.tsv b01eb6cd350dd1398f7a896d4b896cf0ca6222ade064cb9e22b86c42678721e1
ct21_1b_en_debates/dev/20170323_Trump_Times_Interview.tsv ce57ede6791e9bb32a3efd34a4da5b56671c7a750a650050266726c05062a6c0
ct21_1b_en_debates/dev/20170404_Trump_CEO_TownHall.tsv ce3a809c5569701c79a88811ffd9d04f4768040eb4851029b178ff6985c5b571
ct21_1b_en_debates/dev/20170424_Trump_AP_interview.tsv a17ba80ad7fee273880fe3b95424c1f0ca663746b458467275bbd89b3a15b2cb
ct21_1b_en_debates/dev/20170430_Trump_CBS_FactTheNation.tsv bcb912f44be18f12308e2a5a73eb46f7663854412ec3221041e5f178873a50bd
ct21_1b_en_debates/dev/20170601_Trump_Paris_Climate.tsv 9f92fc505c97596b6d38f9625a0a8da605e77f54ea00a5e20607e3a2678be97a
ct21_1b_en_debates/dev/20170713_Trump_Robertson_interview.tsv 252e421e6f328bb61fd5b1274051e18a6864ccb35d45eaca7d4e06055fbbab48
ct21_1b_en_debates/dev/20170724_Trump_healthcare.tsv 54921dafc3035de9036be0067f425c66d7c6bbc547b0badf4f013204177eb258
ct21_1b_en_debates/test/20170512_Trump_NBC_holt_interview.tsv 08c24237d85c583ca8185c74bad9af4c2f3c4447f401513ee2c59fb96b220e07
ct21_1b_en_debates/test/20170803_Trump_WV.tsv 618a9cb5507860309efaf87846d6947c60ebcf3ea7fb48a9b6ad945e9b4de36c
ct21_1b_en_debates/test/20170822_Trump_phoenix.tsv f3703276f1031d109041193ac76a2f3d1be3cc82d85febca1d3125cc20dd5ed4
ct21_1b_en_debates/test/20180426_Trump_Fox_Friends.tsv bbe1a02d8020a7b3fe52379648e3c32f0ffcbf3d948ad20e221b77a9fd2ec7c6
ct21_1b_en_debates/test/20180525_Trump_Naval.tsv b29415d6f7bf72a730e080109ce9271c8b6415463085094151aebe117d066f91
ct21_1b_en_debates/test/20180612_Trump_Singapore.tsv 5501fc7b55a67c1b66683d94f796f4db352d50ff11e0302ef4f50ada699a9c6c
ct21_1b_en_debates/test/20180615_Trump_lawn.tsv 28ad137afecd520bdf7f5c9e155c3a274ee60e083f5a7a436f5b54c1745bf046
ct21_1b_en_debates/test/20180628_Trump_NorthDakota.tsv 2ef89cce3e7be70ef536ce206fb7684d71587323f1c29d059d6c0675cf07be73
"""
"""sha256 of every file of the layout, by its path under ``checkworthy/`` (each folder's SOURCE.txt)."""


_ZIPS = {  # (folder, zip path in the repository, member folder -> destination sub-folder)
    "ct21_1a": ("ct21_1a_en_tweets", f"{CT21}/data/subtask-1a--english/v1.zip", {"v1": ""}),
    "ct21_1a_test": ("ct21_1a_en_tweets", f"{CT21}/test-gold/subtask-1a--english.zip", {"subtask-1a--english": ""}),
    "ct21_1b": (
        "ct21_1b_en_debates",
        f"{CT21}/data/subtask-1b--english/v1.zip",
        {"v1/train": "train", "v1/dev": "dev"},
    ),
    "ct21_1b_test": (
        "ct21_1b_en_debates",
        f"{CT21}/test-gold/subtask-1b--english.zip",
        {"subtask-1b--english": "test"},
    ),
    "ct22_1a": ("ct22_1a_en_tweets", f"{CT22}/CT22_english_1A_checkworthy.zip", {"": ""}),
    "ct22_1b": ("ct22_1b_en_tweets", f"{CT22}/CT22_english_1B_claim.zip", {"": ""}),
    "ct22_1b_test": ("ct22_1b_en_tweets", f"{CT22}/test/CT22_english_1B_claim_test_gold.zip", {"": ""}),
}
_LOOSE = {  # files fetched as they are: path under the data folder -> (repository, commit, path)
    "claimbuster/crowdsourced.csv": (CB_REPO, CB_COMMIT, "data/ClaimBuster/datasets/crowdsourced.csv"),
    "claimbuster/groundtruth.csv": (CB_REPO, CB_COMMIT, "data/ClaimBuster/datasets/groundtruth.csv"),
    "ct22_1a_en_tweets/CT22_english_1A_checkworthy_test_gold.tsv": (
        CT_REPO,
        CT_COMMIT,
        f"{CT22}/test/CT22_english_1A_checkworthy_test_gold.tsv",
    ),
}


def expected_files() -> dict[str, str]:
    """sha256 of every file of the layout, by its path under ``checkworthy/``."""
    return dict(line.split() for line in SHA256_TABLE.strip().splitlines())


def _place(archive: Path, folder: Path, members: dict[str, str], wanted: Mapping[str, str]) -> None:
    """Extract the ``.tsv`` members of ``archive`` into ``folder``: a member in a folder named in
    ``members`` goes to that key's sub-folder (key ``""``: any member, by its file name), and only
    files of the layout (``wanted``, paths under the data folder) are kept."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            member = PurePosixPath(info.filename)
            if info.is_dir() or member.suffix != ".tsv" or member.name.startswith("."):
                continue
            target = members.get(member.parent.as_posix(), members.get(""))
            if target is None:
                continue
            dest = folder / target / member.name
            if dest.relative_to(folder.parent).as_posix() in wanted:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(z.read(info))


def download(dest: str | Path) -> Path:
    """Fetch ClaimBuster and the CheckThat! 2021/2022 task 1 English files into ``dest/checkworthy``
    (the organisers' zips, extracted), each file checked against its published sha256."""
    from factscout.datasets.download import ChecksumMismatch
    from factscout.hashing import file_sha256

    root = Path(dest) / FOLDER
    root.mkdir(parents=True, exist_ok=True)
    wanted = expected_files()
    for rel, (repo, commit, path) in _LOOSE.items():
        fetch(github_raw(repo, commit, path), root / rel)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        for key, (folder, path, members) in _ZIPS.items():
            archive = fetch(github_raw(CT_REPO, CT_COMMIT, path), Path(tmp) / f"{key}.zip")
            _place(archive, root / folder, members, wanted)
    missing = sorted(rel for rel in wanted if not (root / rel).is_file())
    if missing:
        raise InputError(f"the downloaded archives lack {len(missing)} files, e.g. {missing[:3]}")
    for rel, digest in sorted(wanted.items()):
        got = file_sha256(root / rel)
        if got != digest:
            (root / rel).unlink()
            raise ChecksumMismatch(f"refused {rel}: its sha256 is {got}, expected {digest}")
    return root


__all__ = ["SHA256_TABLE", "download", "expected_files"]
