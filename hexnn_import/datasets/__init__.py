"""Data sets for ``compare`` and ``--calibration`` (issue [Scale]): where samples come from
(:mod:`.sources`: an ``.npz``, a folder of images, a glob of ``.npy`` files), how images become model
inputs (:mod:`.preprocess`: resize, centre crop, scaling, channel order, layout, with presets), and samples in
real units (:mod:`.samples`: an ``.npz`` read whole, random samples, a runner's feed in its own input types).

A source is read in slices (``items(start, stop)``), so a run holds one batch at a time whatever the
data set's size; sources and preprocessing are small picklable values, so worker processes (``--jobs``)
and Dask workers (``--scheduler``) open the same data themselves.
"""
from hexnn_import.datasets.preprocess import PRESETS, Preprocess, parse_preprocess
from hexnn_import.datasets.sources import (GeneratedImages, ImageFolder, NpyGlob, NpzSource, Source,
                                          open_source)

__all__ = ["PRESETS", "Preprocess", "parse_preprocess", "Source", "NpzSource", "ImageFolder", "NpyGlob",
           "GeneratedImages", "open_source"]
