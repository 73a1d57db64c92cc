"""Data sets for the experiments: IDX reader and a verifying MNIST / Fashion-MNIST loader."""
