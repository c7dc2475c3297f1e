"""Beyond the notebook: a faster loss for the same maths, and pretraining on any corpus, on one GPU
or many.
"""
