"""Check-worthiness data: ClaimBuster and the English CheckThat! task 1 sets of 2021 and 2022.

Which sentences of a debate, a speech or a tweet are worth fact-checking.

======================  ==============================  ============================================
name                    splits (default first)          what
======================  ==============================  ============================================
``claimbuster``         crowdsourced, groundtruth       22,501 + 1,032 US presidential debate
                                                        sentences (1960-2016), three-way verdicts
``checkthat2021_1a``    train, dev, test                COVID-19 tweets: check-worthy or not (and
                                                        whether each holds a claim)
``checkthat2021_1b``    train, dev, test                40 + 9 + 8 debate / speech transcripts, one
                                                        sentence a line with its speaker; ~1% positive
``checkthat2022_1a``    train, dev, dev_test, test      COVID-19 tweets holding a claim: check-worthy
``checkthat2022_1b``    train, dev, dev_test, test      COVID-19 tweets: holds a verifiable claim
======================  ==============================  ============================================

Arslan, Hassan, Li & Tremayne, 2020, "A Benchmark Dataset of Check-worthy Factual Claims" (ICWSM);
Shaar et al., 2021, "Overview of the CLEF-2021 CheckThat! Lab Task 1 on Check-Worthiness
Estimation in Tweets and Political Debates"; Nakov et al., 2022, "Overview of the CLEF-2022
CheckThat! Lab Task 1 on Identifying Relevant Claims in Tweets" (CLEF Working Notes).

Each split reads as :class:`CheckworthySentence` records (:func:`load_sentences`), or through the
dataset registry as a :class:`~factscout.datasets.Dataset` whose claims carry the same fields in
``meta``. ``checkworthy`` (binary) is always set; ``label`` is the three-way verdict
(:data:`CHECKWORTHY_LABELS`) where the data has it:

- ClaimBuster's ``Verdict``: -1 non-factual, 0 unimportant factual, 1 check-worthy.
- CheckThat! 2022: 1A annotates only tweets that hold a verifiable claim, and every 1B tweet
  with a claim is a 1A tweet (same ids, in every split), so a 1B tweet without a claim is
  non-factual, one with a claim is check-worthy or unimportant factual by its 1A label; the
  1B loader reads 1A beside it for that (``checkworthy`` of a 1B tweet is its 1A label).
- CheckThat! 2021 1A: its ``claim`` column the same way (dev's is 0 for every row, as shipped,
  and two test tweets are check-worthy without a claim: no three-way label for those).
- CheckThat! 2021 1B: binary only (selected for fact-checking by a fact-checking organisation).

The same sentences recur between editions (each folder's SOURCE.txt):

- CheckThat! 2022 1A/1B re-use CheckThat! 2021 1A tweets with new labels (hundreds of tweet ids
  in each CT22 split), and one tweet id of CT22 test is in CT22 train, one in CT22 dev_test.
- CheckThat! 2021 1B train holds four US general-election debates that ClaimBuster holds too
  (2012 third, 2016 first, second and third; the dates differ by a day on two of them), about
  3,200 of its sentences verbatim, labelled differently (ClaimBuster check-worthy, CheckThat!
  not selected) -- :data:`SAME_EVENTS`.

:func:`overlap` finds what a training set shares with an evaluation set (the same tweet, the same
normalised sentence text of :data:`MIN_TEXT_TOKENS` tokens or more, or, across datasets, the same
debate); :func:`without_overlap` removes it from the training side or, with ``refuse=True``,
refuses (:class:`Overlap`), so no model is scored on a sentence it was trained on under another
edition's name.

One line of CheckThat! 2021 1B test, ``20170803_Trump_WV.tsv`` line 73, fuses two speakers'
turns (Donald Trump's remarks, then Governor Jim Justice's speech and the audience's applause)
into one 3,187-character record labelled as Trump's; the lab scores it as one line, so it is
read as one record, flagged ``fused`` (:data:`FUSED_LINES`), and the next line (Justice) stays
its own record.

This module is over 500 lines because the five loaders, the overlap rules that join them and the
published sha256 of all 70 files are one unit: the overlap rules read every dataset.

Licences: ClaimBuster CC BY 4.0 (Zenodo record 3609356); CheckThat! "free for general research
use" (the lab's README), tweets under X/Twitter's terms.
"""

from __future__ import annotations

import re
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch,
    github_raw,
    meta_dict,
    read_delimited,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.records import Claim

CheckworthyLabel = Literal["non-factual", "unimportant factual", "check-worthy"]
"""ClaimBuster's three verdicts (NFS, UFS, CFS), the order of every three-way probability."""
NON_FACTUAL: CheckworthyLabel = "non-factual"
UNIMPORTANT_FACTUAL: CheckworthyLabel = "unimportant factual"
CHECK_WORTHY: CheckworthyLabel = "check-worthy"
CHECKWORTHY_LABELS: tuple[CheckworthyLabel, CheckworthyLabel, CheckworthyLabel] = (
    NON_FACTUAL,
    UNIMPORTANT_FACTUAL,
    CHECK_WORTHY,
)
VERDICTS: dict[str, CheckworthyLabel] = {"-1": NON_FACTUAL, "0": UNIMPORTANT_FACTUAL, "1": CHECK_WORTHY}
"""ClaimBuster's ``Verdict`` column."""

FOLDER = "checkworthy"
MIN_TEXT_TOKENS = 5
"""Shorter texts ("Thank you.", "Go ahead.") recur in every transcript: they are no overlap."""

_CB_REPO, _CB_COMMIT = (
    "matsbratvold/Checkworthiness-Detection-with-Open-Source-LLMs",
    ("66964b538b06fe1728b0d48897a635727f6bbc57"),
)
_CT_REPO, _CT_COMMIT = "TonyTTTTT/Claim-Detection-in-Tweets", "f9b1c838db62d74239d53cae560abc09d3bbec20"
_CT21 = "clef2021-checkthat-lab/task1"
_CT22 = "clef2022-checkthat-lab/task1/data/subtasks-english"
SOURCE = DatasetSource(
    name="Check-worthiness: ClaimBuster (Arslan et al. 2020) and CLEF CheckThat! 2021/2022 task 1 (English)",
    url=github_raw(_CB_REPO, _CB_COMMIT, "data/ClaimBuster/datasets/crowdsourced.csv"),
    license="ClaimBuster: CC BY 4.0 (Zenodo record 3609356); CheckThat! 2021/2022 task 1: 'free for general "
    "research use' (the lab's README); tweets under X/Twitter terms",
    citation="Arslan, Hassan, Li, Tremayne. A Benchmark Dataset of Check-worthy Factual Claims. ICWSM 2020. "
    "Shaar et al. Overview of the CLEF-2021 CheckThat! Lab Task 1 on Check-Worthiness Estimation in Tweets and "
    "Political Debates. Nakov et al. Overview of the CLEF-2022 CheckThat! Lab Task 1 on Identifying Relevant "
    "Claims in Tweets. CLEF 2021/2022 Working Notes.",
)
SOURCES: dict[str, DatasetSource] = {
    "claimbuster": DatasetSource(
        "ClaimBuster (crowdsourced + groundtruth)",
        SOURCE.url,
        "CC BY 4.0 (Zenodo record 3609356, DOI 10.5281/zenodo.3609356)",
        "Arslan, Hassan, Li, Tremayne. A Benchmark Dataset of Check-worthy Factual Claims. ICWSM 2020.",
    ),
    "checkthat2021_1a": DatasetSource(
        "CLEF-2021 CheckThat! task 1A (English tweets)",
        github_raw(_CT_REPO, _CT_COMMIT, f"{_CT21}/data/subtask-1a--english/v1.zip"),
        "free for general research use (clef2021-checkthat-lab README); tweets under X/Twitter terms",
        "Shaar et al. Overview of the CLEF-2021 CheckThat! Lab Task 1. CLEF 2021 Working Notes.",
    ),
    "checkthat2021_1b": DatasetSource(
        "CLEF-2021 CheckThat! task 1B (English debates and speeches)",
        github_raw(_CT_REPO, _CT_COMMIT, f"{_CT21}/data/subtask-1b--english/v1.zip"),
        "free for general research use (clef2021-checkthat-lab README)",
        "Shaar et al. Overview of the CLEF-2021 CheckThat! Lab Task 1. CLEF 2021 Working Notes.",
    ),
    "checkthat2022_1a": DatasetSource(
        "CLEF-2022 CheckThat! task 1A (English tweets, check-worthy)",
        github_raw(_CT_REPO, _CT_COMMIT, f"{_CT22}/CT22_english_1A_checkworthy.zip"),
        "free for general research use (clef2022-checkthat-lab README); tweets under X/Twitter terms",
        "Nakov et al. Overview of the CLEF-2022 CheckThat! Lab Task 1. CLEF 2022 Working Notes.",
    ),
    "checkthat2022_1b": DatasetSource(
        "CLEF-2022 CheckThat! task 1B (English tweets, verifiable claim)",
        github_raw(_CT_REPO, _CT_COMMIT, f"{_CT22}/CT22_english_1B_claim.zip"),
        "free for general research use (clef2022-checkthat-lab README); tweets under X/Twitter terms",
        "Nakov et al. Overview of the CLEF-2022 CheckThat! Lab Task 1. CLEF 2022 Working Notes.",
    ),
}
"""Each dataset's own source and licence (what a model card cites)."""

FOLDERS = {
    "claimbuster": "claimbuster",
    "checkthat2021_1a": "ct21_1a_en_tweets",
    "checkthat2021_1b": "ct21_1b_en_debates",
    "checkthat2022_1a": "ct22_1a_en_tweets",
    "checkthat2022_1b": "ct22_1b_en_tweets",
}
CLAIMBUSTER_FILES = {"crowdsourced": "crowdsourced.csv", "groundtruth": "groundtruth.csv"}
CT21_1A_FILES = {
    "train": "dataset_train_v1_english.tsv",
    "dev": "dataset_dev_v1_english.tsv",
    "test": "dataset_test_english.tsv",
}
_CT22_SUFFIX = {"train": "train", "dev": "dev", "dev_test": "dev_test", "test": "test_gold"}
CT22_1A_FILES = {s: f"CT22_english_1A_checkworthy_{x}.tsv" for s, x in _CT22_SUFFIX.items()}
CT22_1B_FILES = {s: f"CT22_english_1B_claim_{x}.tsv" for s, x in _CT22_SUFFIX.items()}

SAME_EVENTS = {
    "20121023_third_presidential_debate": "2012-10-22",
    "20160926_first_presidential_debate": "2016-09-26",
    "20161010_second_presidential_debate": "2016-10-09",
    "20161019_third_presidential_debate": "2016-10-19",
}
"""CheckThat! 2021 1B transcripts that are ClaimBuster debates (its ``File_id`` date)."""

FUSED_LINES = {
    ("test", "20170803_Trump_WV", 73): "Donald Trump's remarks, Governor Jim Justice's speech and the applause",
}
"""(split, transcript, line) of CheckThat! 2021 1B lines that fuse several turns (module docstring)."""

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


@dataclass(frozen=True, slots=True)
class CheckworthySentence:
    """One sentence (or tweet) with its check-worthiness.

    ``checkworthy`` is always set; ``label`` is the three-way verdict where the data has one,
    ``claim`` whether it holds a (verifiable) claim where known. Transcripts give ``speaker``,
    ``debate`` (the transcript) and ``line_number``; tweets ``tweet_id``. ``event`` names the
    debate across datasets (:data:`SAME_EVENTS`).
    """

    sentence_id: str
    text: str
    checkworthy: bool
    dataset: str
    split: str
    label: CheckworthyLabel | None = None
    claim: bool | None = None
    speaker: str | None = None
    debate: str | None = None
    line_number: int | None = None
    tweet_id: str | None = None
    event: str | None = None
    fused: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.sentence_id:
            raise InputError("a check-worthiness sentence needs an id")
        if self.label is not None and (self.label == CHECK_WORTHY) != self.checkworthy:
            raise InputError(f"{self.sentence_id}: label {self.label!r} disagrees with checkworthy={self.checkworthy}")

    def as_claim(self) -> Claim:
        """The sentence as a :class:`~factscout.records.Claim` (its fields in ``meta``)."""
        meta = meta_dict(
            checkworthy=self.checkworthy,
            label=self.label,
            claim=self.claim,
            speaker=self.speaker,
            debate=self.debate,
            line_number=self.line_number,
            tweet_id=self.tweet_id,
            event=self.event,
            split=self.split,
        )
        if self.fused:
            meta["fused"] = True
        return Claim(self.sentence_id, self.text, None, meta)


def _binary(value: str, where: str) -> bool:
    if value not in ("0", "1"):
        raise InputError(f"{where}: expected a 0/1 label, got {value!r}")
    return value == "1"


def _three_way(claim: bool | None, checkworthy: bool) -> CheckworthyLabel | None:
    if checkworthy:
        return CHECK_WORTHY if claim is not False else None
    if claim is None:
        return None
    return UNIMPORTANT_FACTUAL if claim else NON_FACTUAL


# -- readers ------------------------------------------------------------------------------------

CLAIMBUSTER_HEADER = [
    "Sentence_id",
    "Text",
    "Speaker",
    "Speaker_title",
    "Speaker_party",
    "File_id",
    "Length",
    "Line_number",
    "Sentiment",
    "Verdict",
]


def _claimbuster(root: Path, split: str) -> list[CheckworthySentence]:
    path = require_file(root / FOLDER / FOLDERS["claimbuster"] / CLAIMBUSTER_FILES[split], "claimbuster")
    out = []
    for lineno, row in read_delimited(path, ",", fields=len(CLAIMBUSTER_HEADER), header=False):
        if lineno == 1:
            if row != CLAIMBUSTER_HEADER:
                raise InputError(f"{path}:1: expected the header {','.join(CLAIMBUSTER_HEADER)}")
            continue
        sid, text, speaker, title, party, file_id, _, line, sentiment, verdict = row
        where = f"{path}:{lineno}"
        if verdict not in VERDICTS or not sid.isdigit() or not line.isdigit():
            raise InputError(f"{where}: expected a numeric Sentence_id and Line_number and a Verdict of -1, 0, 1")
        label = VERDICTS[verdict]
        debate = file_id.removesuffix(".txt")
        out.append(
            CheckworthySentence(
                f"cb-{sid}",
                text.strip(),
                label == CHECK_WORTHY,
                "claimbuster",
                split,
                label=label,
                claim=label != NON_FACTUAL,
                speaker=speaker or None,
                debate=debate,
                line_number=int(line),
                event=f"us-debate-{debate}",
                meta=meta_dict(
                    speaker_title=title or None,
                    speaker_party=party or None,
                    sentiment=float(sentiment) if sentiment else None,
                ),
            )
        )
    return out


def _tweet_rows(path: Path, fields: int) -> Iterable[tuple[str, list[str]]]:
    for lineno, row in read_delimited(path, "\t", fields=fields, header=True, quoted=False):
        yield f"{path}:{lineno}", row


def _ct21_1a(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2021_1a"
    path = require_file(root / FOLDER / FOLDERS[name] / CT21_1A_FILES[split], name)
    out = []
    for where, (topic, tweet_id, url, text, claim_col, worthy) in _tweet_rows(path, 6):
        checkworthy = _binary(worthy, where)
        # dev's claim column is 0 for every row, as shipped: unknown there
        claim = None if split == "dev" else _binary(claim_col, where)
        out.append(
            CheckworthySentence(
                tweet_id,
                text.strip(),
                checkworthy,
                name,
                split,
                label=_three_way(claim, checkworthy),
                claim=claim,
                tweet_id=tweet_id,
                meta={"topic": topic, "url": url},
            )
        )
    return out


def _ct22_rows(root: Path, name: str, split: str) -> list[tuple[str, str, str, str, bool]]:
    files = CT22_1A_FILES if name == "checkthat2022_1a" else CT22_1B_FILES
    path = require_file(root / FOLDER / FOLDERS[name] / files[split], name)
    return [
        (tweet_id, text, topic, url, _binary(y, where))
        for where, (topic, tweet_id, url, text, y) in _tweet_rows(path, 5)
    ]


def _ct22_1a(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2022_1a"
    return [
        CheckworthySentence(
            tweet_id,
            text.strip(),
            y,
            name,
            split,
            label=CHECK_WORTHY if y else UNIMPORTANT_FACTUAL,
            claim=True,
            tweet_id=tweet_id,
            meta={"topic": topic, "url": url},
        )
        for tweet_id, text, topic, url, y in _ct22_rows(root, name, split)
    ]


def _ct22_1b(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2022_1b"
    worthy = {s.tweet_id: s.checkworthy for s in _ct22_1a(root, split)}
    out = []
    for tweet_id, text, topic, url, claim in _ct22_rows(root, name, split):
        if claim and tweet_id not in worthy:
            raise InputError(f"{name} {split}: tweet {tweet_id} holds a claim but is not in 1A {split}")
        checkworthy = claim and worthy[tweet_id]
        out.append(
            CheckworthySentence(
                tweet_id,
                text.strip(),
                checkworthy,
                name,
                split,
                label=_three_way(claim, checkworthy),
                claim=claim,
                tweet_id=tweet_id,
                meta={"topic": topic, "url": url},
            )
        )
    return out


def _ct21_1b(root: Path, split: str) -> list[CheckworthySentence]:
    name = "checkthat2021_1b"
    folder = root / FOLDER / FOLDERS[name] / split
    files = sorted(folder.glob("*.tsv")) if folder.is_dir() else []
    if not files:
        require_file(folder / "*.tsv", name)
    out = []
    for path in files:
        out.extend(read_transcript(path, split=split))
    return out


def read_transcript(
    path: str | Path, *, split: str = "test", dataset: str = "checkthat2021_1b"
) -> list[CheckworthySentence]:
    """One CheckThat! 1B transcript (``line_number <TAB> speaker <TAB> text <TAB> label``, no header),
    one record a line; ids ``<file stem>:<line_number>``."""
    path = Path(path)
    debate = path.stem
    out = []
    for lineno, (number, speaker, text, label) in read_delimited(path, "\t", fields=4, header=False, quoted=False):
        where = f"{path}:{lineno}"
        if not number.strip().isdigit():
            raise InputError(f"{where}: expected a line number, got {number!r}")
        line = int(number)
        out.append(
            CheckworthySentence(
                f"{debate}:{line}",
                text.strip(),
                _binary(label.strip(), where),
                dataset,
                split,
                speaker=speaker.strip() or None,
                debate=debate,
                line_number=line,
                event=f"us-debate-{SAME_EVENTS[debate]}" if debate in SAME_EVENTS else f"{dataset}-{debate}",
                fused=(split, debate, line) in FUSED_LINES,
            )
        )
    return out


def read_tweets(
    path: str | Path, *, split: str = "test", dataset: str = "checkthat2022_1a"
) -> list[CheckworthySentence]:
    """A CheckThat! 2022 1A-format tweet file (``topic, tweet_id, tweet_url, tweet_text,
    class_label`` with a header), ``class_label`` read as check-worthy."""
    path = Path(path)
    return [
        CheckworthySentence(
            tweet_id, text.strip(), _binary(y, where), dataset, split, tweet_id=tweet_id, meta={"topic": topic}
        )
        for where, (topic, tweet_id, _url, text, y) in _tweet_rows(path, 5)
    ]


_READERS = {
    "claimbuster": _claimbuster,
    "checkthat2021_1a": _ct21_1a,
    "checkthat2021_1b": _ct21_1b,
    "checkthat2022_1a": _ct22_1a,
    "checkthat2022_1b": _ct22_1b,
}
SPLITS: dict[str, tuple[str, ...]] = {
    "claimbuster": ("crowdsourced", "groundtruth"),
    "checkthat2021_1a": ("train", "dev", "test"),
    "checkthat2021_1b": ("train", "dev", "test"),
    "checkthat2022_1a": ("train", "dev", "dev_test", "test"),
    "checkthat2022_1b": ("train", "dev", "dev_test", "test"),
}


def load_sentences(
    name: str, split: str | None = None, root: str | Path | None = None
) -> tuple[CheckworthySentence, ...]:
    """The sentences of split ``split`` (default: the first of :data:`SPLITS`) of dataset ``name``."""
    from factscout.datasets.base import data_root

    if name not in _READERS:
        from factscout.errors import UnknownName

        raise UnknownName("check-worthiness dataset", name, _READERS)
    split = SPLITS[name][0] if split is None else split
    if split not in SPLITS[name]:
        raise InputError(f"dataset {name!r} has no split {split!r}; valid splits: {', '.join(SPLITS[name])}")
    sentences = _READERS[name](Path(root) if root is not None else data_root(), split)
    seen: set[str] = set()
    for s in sentences:
        if s.sentence_id in seen:
            raise InputError(f"dataset {name!r} split {split!r} has sentence id {s.sentence_id!r} twice")
        seen.add(s.sentence_id)
    return tuple(sentences)


def _as_dataset(name: str, split: str, root: Path) -> Dataset:
    kept, skipped = [], []
    for s in load_sentences(name, split, root):
        if s.text:
            kept.append(s.as_claim())
        else:
            skipped.append(f"{s.sentence_id}: empty text")
    return Dataset(name, split, tuple(kept), source=SOURCES[name], skipped=tuple(skipped))


def _registered(name: str) -> None:
    def read(split: str, root: Path) -> Dataset:
        return _as_dataset(name, split, root)

    read.__module__ = __name__
    register_loader(name, SPLITS[name])(read)


for _name in SPLITS:
    _registered(_name)


# -- overlap between editions -------------------------------------------------------------------

_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalised_text(text: str) -> str:
    """Lower case, runs of anything but letters and digits as one space (the overlap key of a text)."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def overlap_keys(sentence: CheckworthySentence) -> set[str]:
    """What makes two sentences the same: the tweet id, the normalised text (of
    :data:`MIN_TEXT_TOKENS` tokens or more) and (compared across datasets only) the event."""
    keys = set()
    if sentence.tweet_id:
        keys.add(f"tweet:{sentence.tweet_id}")
    text = normalised_text(sentence.text)
    if len(text.split()) >= MIN_TEXT_TOKENS:
        keys.add(f"text:{text}")
    return keys


class Overlap(InputError):
    """A training set shares sentences with the set it is scored on; the message counts them."""


@dataclass(frozen=True, slots=True)
class OverlapReport:
    """What a training set shares with an evaluation set: training sentence ids by reason
    (``tweet``: the same tweet id, ``text``: the same normalised text, ``event``: a debate
    another dataset holds as well)."""

    by_reason: dict[str, tuple[str, ...]]

    @property
    def sentence_ids(self) -> set[str]:
        return {i for ids in self.by_reason.values() for i in ids}

    def __bool__(self) -> bool:
        return any(self.by_reason.values())

    def describe(self) -> str:
        parts = [f"{len(ids)} by {reason}" for reason, ids in sorted(self.by_reason.items()) if ids]
        return ", ".join(parts) or "none"


def overlap(train: Sequence[CheckworthySentence], evaluation: Sequence[CheckworthySentence]) -> OverlapReport:
    """The training sentences that are also in ``evaluation`` (by :func:`overlap_keys`), and those
    of a debate that ``evaluation`` holds under another dataset's name (:data:`SAME_EVENTS`)."""
    held = {k for s in evaluation for k in overlap_keys(s)}
    events = {(s.event, s.dataset) for s in evaluation if s.event}
    found: dict[str, list[str]] = {"tweet": [], "text": [], "event": []}
    for s in train:
        hits = {k.split(":", 1)[0] for k in overlap_keys(s) if k in held}
        if s.event and any(e == s.event and d != s.dataset for e, d in events):
            hits.add("event")
        for reason in hits:
            found[reason].append(s.sentence_id)
    return OverlapReport({r: tuple(ids) for r, ids in found.items()})


def without_overlap(
    train: Sequence[CheckworthySentence], evaluation: Sequence[CheckworthySentence], *, refuse: bool = False
) -> list[CheckworthySentence]:
    """``train`` without what it shares with ``evaluation`` (:func:`overlap`); with ``refuse``,
    an :class:`Overlap` error instead when it shares anything."""
    found = overlap(train, evaluation)
    if found and refuse:
        example = next(iter(sorted(found.sentence_ids)))
        raise Overlap(
            f"the training sentences share {len(found.sentence_ids)} sentences with the evaluation set "
            f"({found.describe()}; e.g. {example}): remove them first, or score another split"
        )
    drop = found.sentence_ids
    return [s for s in train if s.sentence_id not in drop]


# -- downloading (only ever called explicitly by a user) -------------------------------------------

_ZIPS = {  # (folder, zip path in the repository, member folder -> destination sub-folder)
    "ct21_1a": ("ct21_1a_en_tweets", f"{_CT21}/data/subtask-1a--english/v1.zip", {"v1": ""}),
    "ct21_1a_test": ("ct21_1a_en_tweets", f"{_CT21}/test-gold/subtask-1a--english.zip", {"subtask-1a--english": ""}),
    "ct21_1b": (
        "ct21_1b_en_debates",
        f"{_CT21}/data/subtask-1b--english/v1.zip",
        {"v1/train": "train", "v1/dev": "dev"},
    ),
    "ct21_1b_test": (
        "ct21_1b_en_debates",
        f"{_CT21}/test-gold/subtask-1b--english.zip",
        {"subtask-1b--english": "test"},
    ),
    "ct22_1a": ("ct22_1a_en_tweets", f"{_CT22}/CT22_english_1A_checkworthy.zip", {"": ""}),
    "ct22_1b": ("ct22_1b_en_tweets", f"{_CT22}/CT22_english_1B_claim.zip", {"": ""}),
    "ct22_1b_test": ("ct22_1b_en_tweets", f"{_CT22}/test/CT22_english_1B_claim_test_gold.zip", {"": ""}),
}
_LOOSE = {  # files fetched as they are: path under the data folder -> (repository, commit, path)
    "claimbuster/crowdsourced.csv": (_CB_REPO, _CB_COMMIT, "data/ClaimBuster/datasets/crowdsourced.csv"),
    "claimbuster/groundtruth.csv": (_CB_REPO, _CB_COMMIT, "data/ClaimBuster/datasets/groundtruth.csv"),
    "ct22_1a_en_tweets/CT22_english_1A_checkworthy_test_gold.tsv": (
        _CT_REPO,
        _CT_COMMIT,
        f"{_CT22}/test/CT22_english_1A_checkworthy_test_gold.tsv",
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
            archive = fetch(github_raw(_CT_REPO, _CT_COMMIT, path), Path(tmp) / f"{key}.zip")
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


__all__ = [
    "CHECKWORTHY_LABELS",
    "CHECK_WORTHY",
    "NON_FACTUAL",
    "UNIMPORTANT_FACTUAL",
    "CheckworthyLabel",
    "CheckworthySentence",
    "Overlap",
    "OverlapReport",
    "load_sentences",
    "overlap",
    "read_transcript",
    "read_tweets",
    "without_overlap",
]
