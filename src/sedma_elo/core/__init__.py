"""The pure rating core: rules as data, validated match inputs, the update and its explanation.

Nothing here does I/O or imports the batch, storage, service or web layers.
"""
