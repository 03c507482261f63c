"""The agent's inputs for a topic: exactly what a real user would hand a focused crawler."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TopicInputs:
    """Keywords, labelled example page texts (no URLs) and seed URLs. No ground truth beyond these.

    ``example_labels[i]`` is 1 when ``example_texts[i]`` is on topic, else 0.
    """

    name: str
    keywords: list[str]
    example_texts: list[str]
    example_labels: list[int]
    seeds: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.example_texts) != len(self.example_labels):
            raise ValueError("example_texts and example_labels differ in length")
        if self.example_labels and len(set(self.example_labels)) < 2:
            raise ValueError(f"topic {self.name!r} needs both relevant and irrelevant example texts")
