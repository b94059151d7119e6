"""Write photos.npz: scikit-learn's two sample photographs (china.jpg, flower.jpg), uint8 [2, 427, 640, 3].

Run in a development venv with scikit-learn and pillow (never at run time):
    python models/real/make_photos.py
Tests crop and resize these with numpy (hexnn_import/testing/photos.py), so a
clone needs neither package. Provenance: scikit-learn's bundled sample images
(CC-BY licensed photographs shipped in sklearn/datasets/images/).
"""
from pathlib import Path

import numpy as np
from sklearn.datasets import load_sample_images

images = np.stack(load_sample_images().images).astype(np.uint8)
np.savez_compressed(Path(__file__).with_name("photos.npz"), photos=images)
print("photos.npz", images.shape)
