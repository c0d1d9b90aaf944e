"""Which receiver a request goes to: the one of the tenant its bearer token stands for.

Without a tenants file there is one receiver, and the optional token of
``--token-file`` lets requests in.  With one, each tenant has a receiver of its own (its
journal under ``DATA_DIR/tenants/NAME``, its trace buffer, its graph), and the token
alone picks it: nothing in a request's spans can move them into another tenant's
receiver, so spans of two tenants with one trace id are two traces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from otel_prov._tenants import Tenants
from otel_prov._tokens import BearerToken
from otel_prov.ingest.receiver._metrics import Histogram, Sample, render
from otel_prov.ingest.receiver._receiver import Receiver

__all__ = ["Gate"]


class Gate:
    """``receivers`` by tenant name (``""``: the one receiver without tenants)."""

    def __init__(
        self,
        receivers: Mapping[str, Receiver],
        *,
        token: BearerToken | None = None,
        tenants: Tenants | None = None,
    ) -> None:
        if (tenants is None) != ("" in receivers):
            raise ValueError("a receiver per tenant with a tenants file, else one")
        self.receivers = dict(receivers)
        self.token = token
        self.tenants = tenants

    @classmethod
    def single(cls, receiver: Receiver, token: BearerToken | None = None) -> Gate:
        return cls({"": receiver}, token=token)

    @property
    def requires_token(self) -> bool:
        return self.token is not None or self.tenants is not None

    def pick(self, authorization: str | None) -> Receiver | None:
        """The receiver a request with this ``Authorization`` goes to; None: refused."""
        if self.tenants is None:
            ok = self.token is None or self.token.matches(authorization)
            return self.receivers[""] if ok else None
        scheme, _, token = (authorization or "").strip().partition(" ")
        tenant = self.tenants.by_token(token) if scheme.lower() == "bearer" else None
        return None if tenant is None else self.receivers.get(tenant.name)

    @property
    def ready(self) -> bool:
        return all(receiver.ready for receiver in self.receivers.values())

    def metrics(self) -> str:
        """Prometheus text: each tenant's samples labelled ``tenant="NAME"``."""
        samples: list[Sample] = []
        histograms: list[Histogram] = []
        for name, receiver in self.receivers.items():
            some, histogram = receiver.metric_samples()
            labels = f'tenant="{name}"' if name else ""
            samples += [_labelled(sample, labels) for sample in some]
            histograms.append(histogram.labelled(labels))
        return render(samples, histograms)

    def start(self) -> None:
        for receiver in self.receivers.values():
            receiver.start()

    def drain(self, timeout: float) -> bool:
        return all([receiver.drain(timeout) for receiver in self.receivers.values()])

    def data_dirs(self) -> Iterable[str]:
        return (str(receiver.settings.data_dir) for receiver in self.receivers.values())


def _labelled(sample: Sample, labels: str) -> Sample:
    return Sample(sample.name, sample.kind, sample.help, sample.value, labels)
