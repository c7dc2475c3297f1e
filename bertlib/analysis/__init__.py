"""Looking inside a trained model: context-sensitive vectors, fill-mask guesses, whether a head's
attention explains what it does, and a run's snapshots.
"""
