"""Fine-tuning BERT: the labelled tasks, the classifier, tagger and question answerer, and the
loop.
"""
