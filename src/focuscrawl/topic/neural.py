"""KwBiLSTM (TRES arXiv section 3.4) and a vanilla BiLSTM: page text -> P(relevant), in PyTorch on CPU.

Preprocessing as the paper: stopwords removed, each remaining word replaced by its (frozen, static) word
vector, the first L words kept (a page's title and lead come first), zero-padded, and the padding masked
(we pack the sequences, PyTorch's equivalent of Keras' Masking layer). Network (Figure 1 of the arXiv
paper, as we read it)::

    words (L x d) -> BiLSTM -> mean pooling over real words -> Dense+ReLU ------+
                                                                               Concat1 <- EK
                                                    Dense+ReLU <---------------+
                                                        +-------------------- Concat2 <- LK (shortcut)
                                                    Dense(2) -> softmax, trained with cross-entropy

EK, the Exhaustive Keyword Vector, has N_EK = the mean number of keyword occurrences in the relevant
training texts (rounded, clipped to [1, 32]); EK_i = 1 when the text holds at least i keyword occurrences.
LK, the Limited Keyword Vector, has 3 entries: the keyword density n_k / n_t (scaled by 10 and clipped to
1 so that it spans the binary features' range), 1 if a keyphrase (multi-word keyword) occurs, and 1 if a
keyword occurs in the text's first 12 words. The paper's third entry is "a keyword in the URL"; a
RelevanceModel sees texts only, so the title-like first words stand in for the URL.
Keywords are the expanded set K of ``focuscrawl.topic.keywords.expand_keywords``.

The vanilla BiLSTM is the same network without EK and LK. Choices not in the paper: hidden size 32 per
direction, L = 150, 10 epochs of Adam (lr 2e-3, batches of 32), dropout 0.2 after pooling, and class
weights balancing the loss because topics come with few relevant examples (1:4 on the benchmark). Torch
runs on 1 thread (shared 2-core machines; it also keeps results bit-for-bit reproducible).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from focuscrawl.topic.embeddings import VECTORS_VERSION, WordVectors, load_word_vectors, torch_threads
from focuscrawl.topic.keywords import KeywordSet, expand_keywords
from focuscrawl.topic.text import STOPWORDS, words
from focuscrawl.types import TopicInputs

FORMAT = "focuscrawl.relevance/1"
LK_DIM = 3
TITLE_WORDS = 12
EK_MAX = 32


@dataclass
class BiLSTMConfig:
    max_words: int = 150  # L
    hidden: int = 32
    dense: int = 64
    epochs: int = 10
    batch_size: int = 32
    lr: float = 2e-3
    dropout: float = 0.2
    threads: int = 1
    extra: dict = field(default_factory=dict)


class KwBiLSTMNet(nn.Module):
    def __init__(self, dim: int, hidden: int, dense: int, ek_dim: int, lk_dim: int, dropout: float):
        super().__init__()
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.dense1 = nn.Linear(2 * hidden, dense)
        self.dense2 = nn.Linear(dense + ek_dim, dense // 2)
        self.out = nn.Linear(dense // 2 + lk_dim, 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, ek: torch.Tensor, lk: torch.Tensor) -> torch.Tensor:
        # Empty texts get one zero "word" so that packing works; their prediction rests on EK/LK.
        lengths = lengths.clamp(min=1)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        seq, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=x.shape[1])
        mask = (torch.arange(x.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1)
        pooled = (seq * mask).sum(1) / lengths[:, None]
        h = self.drop(torch.relu(self.dense1(pooled)))
        h = torch.relu(self.dense2(torch.cat([h, ek], dim=1)))  # Concat1: EK
        return self.out(torch.cat([h, lk], dim=1))  # Concat2: the LK shortcut


class BiLSTMRelevanceModel:
    """RelevanceModel over a (Kw)BiLSTM. With ``keywords`` it is KwBiLSTM, without it the vanilla BiLSTM."""

    def __init__(self, keywords: KeywordSet | None = None, seed: int = 0, config: BiLSTMConfig | None = None,
                 vectors: WordVectors | None = None):
        self.keywords = keywords
        self.seed = seed
        self.config = config or BiLSTMConfig()
        self.vectors = vectors if vectors is not None else load_word_vectors()
        self.ek_dim = 0
        self.net: KwBiLSTMNet | None = None

    @property
    def kind(self) -> str:
        return "kwbilstm" if self.keywords is not None else "bilstm"

    # -- features -------------------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> tuple[torch.Tensor, ...]:
        L, dim = self.config.max_words, self.vectors.dim
        tokenized = [words(text) for text in texts]
        kept = [[w for w in tokens if len(w) > 1 and w not in STOPWORDS][:L] for tokens in tokenized]
        # Padded to the batch's longest text, not to L: a batch of anchors is a few words long, and packing a
        # (batch, 150, dim) tensor that is 97% padding cost more than the BiLSTM itself. Padding is masked, so
        # the probabilities are the same.
        width = max(1, max(map(len, kept), default=0))
        x = np.zeros((len(texts), width, dim), dtype=np.float32)
        lengths = np.zeros(len(texts), dtype=np.int64)
        ek = np.zeros((len(texts), self.ek_dim), dtype=np.float32)
        lk = np.zeros((len(texts), LK_DIM if self.keywords is not None else 0), dtype=np.float32)
        for i, (tokens, content) in enumerate(zip(tokenized, kept)):
            if content:
                x[i, :len(content)] = self.vectors.vectors(content)
            lengths[i] = len(content)
            if self.keywords is not None:
                n_words, n_phrases = self.keywords.match_tokens(tokens)
                count = n_words + n_phrases
                ek[i, :min(count, self.ek_dim)] = 1.0
                lk[i] = (min(1.0, 10.0 * count / max(len(tokens), 1)), float(n_phrases > 0),
                         float(self.keywords.count_tokens(tokens[:TITLE_WORDS]) > 0))
        return torch.from_numpy(x), torch.from_numpy(lengths), torch.from_numpy(ek), torch.from_numpy(lk)

    def _build(self) -> None:
        torch.manual_seed(self.seed)
        c = self.config
        lk_dim = LK_DIM if self.keywords is not None else 0
        self.net = KwBiLSTMNet(self.vectors.dim, c.hidden, c.dense, self.ek_dim, lk_dim, c.dropout)

    # -- RelevanceModel ------------------------------------------------------------------------------
    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> BiLSTMRelevanceModel:
        y = torch.as_tensor(np.asarray(labels, dtype=np.int64))
        if self.keywords is not None:
            relevant = [t for t, label in zip(texts, labels, strict=True) if label == 1]
            mean_count = np.mean([self.keywords.count(t) for t in relevant]) if relevant else 1.0
            self.ek_dim = int(np.clip(round(float(mean_count)), 1, EK_MAX))
        c = self.config
        with torch_threads(c.threads):
            self._build()
            features = self._encode(texts)
            counts = torch.bincount(y, minlength=2).float().clamp(min=1)
            loss_fn = nn.CrossEntropyLoss(weight=counts.sum() / (2 * counts))
            optimizer = torch.optim.Adam(self.net.parameters(), lr=c.lr)
            generator = torch.Generator().manual_seed(self.seed)
            self.net.train()
            for _ in range(c.epochs):
                order = torch.randperm(len(y), generator=generator)
                for start in range(0, len(y), c.batch_size):
                    idx = order[start:start + c.batch_size]
                    logits = self.net(*(f[idx] for f in features))
                    loss = loss_fn(logits, y[idx])
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            self.net.eval()
        return self

    def predict_proba(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        if self.net is None:
            raise RuntimeError("fit the model first")
        if len(texts) == 0:
            return np.zeros(0)
        out = []
        with torch_threads(self.config.threads), torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                logits = self.net(*self._encode(list(texts[start:start + batch_size])))
                out.append(torch.softmax(logits, dim=1)[:, 1].numpy())
        return np.concatenate(out).astype(np.float64)

    # -- persistence ---------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        torch.save({
            "format": FORMAT, "kind": self.kind, "seed": self.seed, "config": asdict(self.config),
            "ek_dim": self.ek_dim, "vectors_version": VECTORS_VERSION, "state": self.net.state_dict(),
            "keywords": self.keywords.to_dict() if self.keywords is not None else None,
        }, Path(path))

    @classmethod
    def from_checkpoint(cls, data: dict, vectors: WordVectors | None = None) -> BiLSTMRelevanceModel:
        if data.get("vectors_version") != VECTORS_VERSION:
            raise ValueError(f"model was trained with word vectors {data.get('vectors_version')!r}, "
                             f"this version uses {VECTORS_VERSION!r}")
        keywords = KeywordSet.from_dict(data["keywords"]) if data["keywords"] is not None else None
        model = cls(keywords, seed=data["seed"], config=BiLSTMConfig(**data["config"]), vectors=vectors)
        model.ek_dim = data["ek_dim"]
        model._build()
        model.net.load_state_dict(data["state"])
        model.net.eval()
        return model


def kwbilstm_for_topic(topic: TopicInputs, seed: int = 0, config: BiLSTMConfig | None = None) -> BiLSTMRelevanceModel:
    """KwBiLSTM with keywords expanded from this topic's own inputs, fitted on its example texts."""
    vectors = load_word_vectors()
    keywords = expand_keywords(topic, vectors)
    model = BiLSTMRelevanceModel(keywords, seed=seed, config=config, vectors=vectors)
    return model.fit(topic.example_texts, topic.example_labels)


def bilstm_for_topic(topic: TopicInputs, seed: int = 0, config: BiLSTMConfig | None = None) -> BiLSTMRelevanceModel:
    return BiLSTMRelevanceModel(None, seed=seed, config=config).fit(topic.example_texts, topic.example_labels)


def load_relevance_model(path: str | Path):
    """Load a model saved by ``save`` of a BiLSTM/KwBiLSTM (torch zip) or of the SVM (joblib)."""
    path = Path(path)
    with path.open("rb") as handle:
        is_torch_zip = handle.read(2) == b"PK"
    if is_torch_zip:
        data = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not a focuscrawl relevance model")
        return BiLSTMRelevanceModel.from_checkpoint(data)
    from focuscrawl.topic.svm import SvmRelevanceModel

    return SvmRelevanceModel.load(path)
