"""The splits stage: dedup, group-aware held-out selection, dataset revisions, push, export.

``trajforge split`` turns accepted task folders into a Hub-ready dataset folder (parquet per
config and split, ``manifest.json``, a dataset card); ``trajforge push`` publishes it as a
revision of a local git repository (:mod:`trajforge.splits.localgit`) or of a Hugging Face Hub
dataset (:mod:`trajforge.splits.hub`); ``trajforge export`` writes Harbor task directories.
"""
