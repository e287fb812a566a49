"""The trained classifier: a calibrated linear probe over frozen encoder pair features.

Why this model: it must run offline on two CPU cores and train in minutes on the only
labelled relation data here (Re-DocRED dev, 500 documents). Fine-tuning the encoder on
350 documents overfits and takes long on CPU; a multinomial logistic regression over the
pooled MiniLM features (`features.py`) trains in about a minute, has one regularisation
knob, and its softmax, after temperature scaling, is a calibrated probability, which is
what KGERMAR's triple weight expects of `conf`. Trained on Re-DocRED dev it knows five
labels: the file has no causal or use relations (P828, P1542, P366), so it never predicts
CausedBy or UsedFor, and IsA (141 gold triples) is too rare to win. In a side experiment
a one-hidden-layer MLP on the same features gained about 3 points of document-level F1;
the convex model was kept because it trains deterministically from (data hash, seed).

An artifact is a folder `<KGMEM_HOME>/models/relation_classifier/<name>/` with
`probe.npz` (feature mean and scale, coefficients, intercepts; numbers only, no pickle)
and `metadata.json` (classes, temperature, encoder, window, data hash, split, metrics,
versions). Model files are never committed: `transforms.relation_classifier.training`
writes them from a Re-DocRED-layout file. Without an artifact, loading raises
`FileNotFoundError` saying how to train one; the build keeps the dependency-pattern
extractor meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from transforms.relation_classifier.calibration import calibrated_probabilities
from transforms.relation_classifier.features import DEFAULT_MAX_LENGTH, pair_features
from transforms.relation_classifier.pairs import SegmentPairs
from transforms.relation_inventory import NO_RELATION

MODELS_DIR = Path("models") / "relation_classifier"
DEFAULT_NAME = "redocred-minilm"
WEIGHTS_FILE = "probe.npz"
METADATA_FILE = "metadata.json"


def artifact_dir(home: str | Path, name: str = DEFAULT_NAME) -> Path:
    """Folder of the classifier artifact `name` in the workspace `home`."""
    return Path(home) / MODELS_DIR / name


def find_artifact(home: str | Path, name: str = DEFAULT_NAME) -> Path | None:
    """The artifact folder `name` (a folder path, or a name under `home`) if it holds a
    trained probe, else None: what a build checks before running the classifier."""
    folder = Path(name) if Path(name).is_dir() else artifact_dir(home, name)
    return folder if (folder / WEIGHTS_FILE).exists() else None


@dataclass(frozen=True)
class LinearProbe:
    """Standardisation, a multinomial linear layer and a softmax temperature."""

    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # classes x features
    intercept: np.ndarray  # classes
    temperature: float = 1.0

    def logits(self, features: np.ndarray) -> np.ndarray:
        """Uncalibrated class scores of feature rows."""
        return ((features - self.mean) / self.scale) @ self.coef.T + self.intercept

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Calibrated class probabilities of feature rows."""
        return calibrated_probabilities(self.logits(features), self.temperature)

    def save(self, folder: Path, metadata: dict[str, Any]) -> None:
        """Write the weights and `metadata` (classes and temperature added) to `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(
            folder / WEIGHTS_FILE,
            mean=self.mean,
            scale=self.scale,
            coef=self.coef,
            intercept=self.intercept,
        )
        document = {**metadata, "classes": list(self.classes), "temperature": self.temperature}
        (folder / METADATA_FILE).write_text(json.dumps(document, indent=2) + "\n")

    @classmethod
    def load(cls, folder: Path) -> tuple[LinearProbe, dict[str, Any]]:
        """(probe, metadata) saved in `folder`."""
        if not (folder / WEIGHTS_FILE).exists():
            raise FileNotFoundError(
                f"no relation classifier in {folder}; train one with `python -m "
                "transforms.relation_classifier.training --dataset "
                "../shared/data/redocred/dev_revised.json --home <KGMEM_HOME>` "
                "(any Re-DocRED-layout file works)"
            )
        metadata = json.loads((folder / METADATA_FILE).read_text())
        with np.load(folder / WEIGHTS_FILE) as weights:
            probe = cls(
                classes=tuple(metadata["classes"]),
                mean=weights["mean"],
                scale=weights["scale"],
                coef=weights["coef"],
                intercept=weights["intercept"],
                temperature=float(metadata["temperature"]),
            )
        return probe, metadata


class ProbeBackend:
    """`RelationBackend` of a saved linear probe over encoder pair features."""

    def __init__(self, folder: str | Path, batch_size: int = 32) -> None:
        self._folder = Path(folder)
        self._probe, self._metadata = LinearProbe.load(self._folder)
        self._batch_size = batch_size

    @property
    def extractor(self) -> str:
        return f"classifier/probe:{self._folder.name}"

    @property
    def classes(self) -> tuple[str, ...]:
        return self._probe.classes

    @property
    def none_label(self) -> str:
        return self._metadata.get("none_label", NO_RELATION)

    @property
    def metadata(self) -> dict[str, Any]:
        return self._metadata

    def probabilities(self, items: Sequence[SegmentPairs]) -> list[np.ndarray]:
        features = pair_features(
            items,
            model=self._metadata["encoder"],
            batch_size=self._batch_size,
            max_length=self._metadata.get("max_length", DEFAULT_MAX_LENGTH),
        )
        return split_rows(self._probe.probabilities(features), items)


def split_rows(matrix: np.ndarray, items: Sequence[SegmentPairs]) -> list[np.ndarray]:
    """`matrix` (rows of all pairs, item order) cut into one block per item."""
    bounds = np.cumsum([len(item.pairs) for item in items])[:-1]
    return np.split(matrix, bounds) if items else []
