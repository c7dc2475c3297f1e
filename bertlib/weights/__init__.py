"""Saving and loading weights: bertlib's own checkpoints and real BERT checkpoints.
"""
