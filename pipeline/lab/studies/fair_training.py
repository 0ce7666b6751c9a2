"""The fairness-shield paper's (AAAI 2025) five classifiers, trained as the Fair Fairness Benchmark it builds on trains
them: ERM, and four in-processing fair-training methods that add a penalty (DiffDP, HSIC, PRemover) or an adversary
(LAFTR) to the same 150 Adam steps. Needs the `classifiers` extra (PyTorch).

Every classifier but LAFTR is a 512-256-64 ReLU network with dropout ½ after each hidden layer (the benchmark's
`F.dropout` default) and a sigmoid head, trained on binary cross-entropy plus λ times its penalty at learning rate 0.01,
divided by 10 every 50 steps. LAFTR encodes with a 256-128 network, reconstructs the features, classifies and has an
adversary guess the group from the code through a gradient reversal: A_x · RMSE + A_y · BCE(label) + A_z · BCE(group).
Batches are drawn as the benchmark's infinite loader draws them: shuffled epochs, the last short batch dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from fairstream.lab.studies.portable_torch import functional, nn, torch
from fairstream.records.errors import InputError

CLASSIFIERS = ("diffdp", "erm", "hsic", "laftr", "pr")
"""The paper's classifiers, in the order of its Table 2's columns."""
PAPER_NAMES = {"diffdp": "DiffDP", "erm": "ERM", "hsic": "HSIC", "laftr": "LAFTR", "pr": "PRemover"}
LAFTR_WEIGHTS = (8.0, 4.0, 2.1)
"""LAFTR's A_x (reconstruction), A_y (label) and A_z (adversary), as the authors' fork sets them."""
LAYERS = (512, 256, 64)
LAFTR_LAYERS = (256, 128)
LAFTR_HEAD = 64
DROPOUT = 0.5
STEPS = 150
LEARNING_RATE = 0.01
DECAY_EVERY = 50
DECAY = 0.1
UNKNOWN_CLASSIFIER = "unknown classifier {name!r}; known: {known}"


def parity_penalty(scores: torch.Tensor, sensitive: torch.Tensor) -> torch.Tensor:
    """DiffDP's penalty: |mean score of group a − mean score of group b|."""
    return (scores[sensitive == 0].mean() - scores[sensitive == 1].mean()).abs()


def _gaussian_kernel(x: torch.Tensor, sigma: float = 1.0) -> torch.Tensor:
    return torch.exp(-torch.cdist(x, x).square() / sigma)


def hsic(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The biased Hilbert-Schmidt independence criterion of two columns, Gaussian kernels of width 1:
    tr(L H K H) / (m − 1)² with H the centring matrix, summed as Σ L ∘ (H K H) in O(m²)."""
    kernel = _gaussian_kernel(x)
    centred = kernel - kernel.mean(dim=0, keepdim=True) - kernel.mean(dim=1, keepdim=True) + kernel.mean()
    return (_gaussian_kernel(y) * centred).sum() / (x.shape[0] - 1) ** 2


def prejudice_index(scores: torch.Tensor, sensitive: torch.Tensor) -> torch.Tensor:
    """PRemover's penalty, summed over the batch: Σ_x Σ_y P(y | x) log(P(y | s_x) / P(y)), the probabilities the
    network's scores and their means per group and overall."""
    overall = scores.mean()
    index = scores.new_zeros(())
    for group in (0, 1):
        own = scores[sensitive == group]
        rate = own.mean()
        index = index + (own * (rate.log() - overall.log())).sum() + ((1 - own) * ((1 - rate).log() - (1 - overall).log())).sum()
    return index


PENALTIES: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], float]] = {
    "diffdp": (parity_penalty, 1.0),
    "hsic": (hsic, 100.0),
    "pr": (prejudice_index, 0.06),
}
"""Each penalized classifier's penalty and its λ (the authors' fork's defaults)."""


class Network(nn.Module):
    """Linear layers, each followed by ReLU and dropout, then a sigmoid head; returns the last hidden layer too."""

    def __init__(self, inputs: int, layers: tuple[int, ...]) -> None:
        super().__init__()
        sizes = (inputs, *layers)
        self.hidden = nn.ModuleList(nn.Linear(i, o) for i, o in zip(sizes[:-1], sizes[1:]))
        self.head = nn.Linear(sizes[-1], 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        for layer in self.hidden:
            x = functional.dropout(functional.relu(layer(x)), DROPOUT, self.training)
        return x, torch.sigmoid(self.head(x))


class _ReverseGradient(torch.autograd.Function):
    """The identity forward, the negated gradient backward: the encoder learns to defeat the adversary."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad.neg()


class Laftr(nn.Module):
    """LAFTR's encoder, decoder, label classifier and group adversary."""

    def __init__(self, inputs: int) -> None:
        super().__init__()
        code = LAFTR_LAYERS[-1]
        self.encoder = Network(inputs, LAFTR_LAYERS)
        self.decoder = Network(code, (inputs,))
        self.classifier = Network(code, (LAFTR_HEAD,))
        self.adversary = Network(code, (LAFTR_HEAD,))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        code, _ = self.encoder(x)
        return code, self.classifier(code)[1]

    def loss(self, x: torch.Tensor, labels: torch.Tensor, sensitive: torch.Tensor) -> torch.Tensor:
        code, scores = self(x)
        reconstruction = torch.sqrt(functional.mse_loss(self.decoder(code)[0], x) + 1e-6)
        guess = self.adversary(_ReverseGradient.apply(code))[1]
        weight_x, weight_y, weight_z = LAFTR_WEIGHTS
        return weight_x * reconstruction + weight_y * functional.binary_cross_entropy(scores, labels) + weight_z * functional.binary_cross_entropy(guess, sensitive)


def batches(rows: int, size: int, steps: int, generator: torch.Generator):
    """Row indices of `steps` batches: shuffled epochs of `rows`, each cut into batches of `size`, the remainder dropped.

    >>> [len(b) for b in batches(5, 2, 3, torch.Generator().manual_seed(0))]
    [2, 2, 2]
    """
    drawn = 0
    while drawn < steps:
        order = torch.randperm(rows, generator=generator)
        for start in range(0, rows - size + 1, size):
            if drawn == steps:
                return
            yield order[start : start + size]
            drawn += 1


@contextmanager
def _one_thread():
    """Train on one thread: the same sums in the same order on any machine (with the kernels `portable_torch` pins), so
    the same network."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train(classifier: str, features: np.ndarray, labels: np.ndarray, sensitive: np.ndarray, batch: int, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """Train `classifier` on the rows given (features encoded as numbers) and return its scorer: rows → P(label 1)."""
    if classifier not in CLASSIFIERS:
        raise InputError(UNKNOWN_CLASSIFIER.format(name=classifier, known=", ".join(CLASSIFIERS)))
    with _one_thread(), torch.random.fork_rng(devices=[]):  # the seed sets weights and dropout, not the caller's RNG
        torch.manual_seed(seed)
        x = torch.as_tensor(features, dtype=torch.float32)
        y = torch.as_tensor(labels, dtype=torch.float32).reshape(-1, 1)
        s = torch.as_tensor(sensitive, dtype=torch.float32).reshape(-1, 1)
        model: nn.Module = Laftr(x.shape[1]) if classifier == "laftr" else Network(x.shape[1], LAYERS)
        optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
        schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=DECAY_EVERY, gamma=DECAY)
        model.train()
        for rows in batches(len(x), min(batch, len(x)), STEPS, torch.Generator().manual_seed(seed)):
            optimizer.zero_grad()
            if isinstance(model, Laftr):
                loss = model.loss(x[rows], y[rows], s[rows])
            else:
                scores = model(x[rows])[1]
                loss = functional.binary_cross_entropy(scores, y[rows])
                if classifier in PENALTIES:
                    penalty, weight = PENALTIES[classifier]
                    loss = loss + weight * penalty(scores, s[rows])
            loss.backward()
            optimizer.step()
            schedule.step()
        model.eval()

    def score(rows: np.ndarray) -> np.ndarray:
        with _one_thread(), torch.no_grad():
            return model(torch.as_tensor(rows, dtype=torch.float32))[1].numpy().ravel().astype(float)

    return score
