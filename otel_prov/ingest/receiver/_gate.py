"""Which receiver a request goes to: the one of the tenant its bearer token stands for,
or, without a token under mutual TLS, its client certificate's subject.

Without a tenants file there is one receiver, and the optional token of
``--token-file`` lets requests in.  With one, each tenant has a receiver of its own (its
journal under ``DATA_DIR/tenants/NAME``, its trace buffer, its graph), and the token
alone picks it: nothing in a request's spans can move them into another tenant's
receiver, so spans of two tenants with one trace id are two traces.  A request refused
is said in the log (which transport, from where, why), the token never.

The tenants file is read again when it changes, or on ``SIGHUP`` (:meth:`Gate.reload`):
a token taken out is refused from then on.  A tenant added has no receiver until the
next start (its requests are refused, and that is logged); one taken out keeps its
receiver, which stores what it has, but no token reaches it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from otel_prov._tenants import Tenant, Tenants
from otel_prov._tokens import BearerToken
from otel_prov.ingest.receiver._metrics import Histogram, Sample, render
from otel_prov.ingest.receiver._receiver import Receiver

__all__ = ["Gate"]

_logger = logging.getLogger(__name__)


class Gate:
    """``receivers`` by tenant name (``""``: the one receiver without tenants)."""

    def __init__(
        self,
        receivers: Mapping[str, Receiver],
        *,
        token: BearerToken | None = None,
        tenants: Tenants | None = None,
        metrics_token: BearerToken | None = None,
    ) -> None:
        if (tenants is None) != ("" in receivers):
            raise ValueError("a receiver per tenant with a tenants file, else one")
        self.receivers = dict(receivers)
        self.token = token
        self.tenants = tenants
        self.metrics_token = metrics_token

    @classmethod
    def single(
        cls,
        receiver: Receiver,
        token: BearerToken | None = None,
        metrics_token: BearerToken | None = None,
    ) -> Gate:
        return cls({"": receiver}, token=token, metrics_token=metrics_token)

    @property
    def requires_token(self) -> bool:
        return self.token is not None or self.tenants is not None

    @property
    def takes_subjects(self) -> bool:
        """Does a client certificate's subject pick a tenant (else no need to read it)?"""
        return self.tenants is not None and self.tenants.has_subjects

    def pick(
        self, authorization: str | None, subject: str | None = None, *, said: str = ""
    ) -> Receiver | None:
        """The receiver a request with this ``Authorization`` (and, under mutual TLS, a
        client certificate of ``subject``) goes to; None: refused, and logged as
        ``said`` (the transport and the peer).  A token sent decides; the subject only
        without one."""
        if self.tenants is None:
            if self.token is None or self.token.matches(authorization):
                return self.receivers[""]
            _logger.warning("%s refused a request: missing or wrong bearer token", said)
            return None
        tenant, why = self._tenant(self.tenants, authorization, subject)
        if tenant is None:
            _logger.warning("%s refused a request: %s", said, why)
            return None
        receiver = self.receivers.get(tenant.name)
        if receiver is None:
            _logger.warning(
                "%s refused a request of tenant %s: it was added to the tenants file after "
                "the start; restart receive to take its requests",
                said,
                tenant.name,
            )
        return receiver

    def reload(self) -> None:
        """Read the tenants file again (``SIGHUP``); a bad one is logged and not used."""
        if self.tenants is not None:
            self.tenants.reload()

    def _tenant(
        self, tenants: Tenants, authorization: str | None, subject: str | None
    ) -> tuple[Tenant | None, str]:
        """The tenant a request stands for, and why none when none."""
        if authorization:
            scheme, _, token = authorization.strip().partition(" ")
            tenant = tenants.by_token(token) if scheme.lower() == "bearer" else None
            return tenant, "its bearer token is no tenant's (--tenants)"
        if subject is not None:
            why = f"no token, and its client certificate {subject} is no tenant's (--tenants)"
            return tenants.by_subject(subject), why
        return None, "no bearer token, nor a client certificate of a tenant"

    def metrics_for(self, authorization: str | None, subject: str | None = None) -> str | None:
        """``/metrics`` for a request with this ``Authorization``; None: refused.  The
        metrics token (``--metrics-token-file``) reads every tenant's samples, a tenant's
        token (or client certificate) its own only; a tenant's name is no business of
        another's.  Without tenants it is open unless a metrics token is set."""
        if self.metrics_token is not None and self.metrics_token.matches(authorization):
            return self.metrics()
        if self.tenants is None:
            return self.metrics() if self.metrics_token is None else None
        tenant, _ = self._tenant(self.tenants, authorization, subject)
        return (
            None
            if tenant is None or tenant.name not in self.receivers
            else self.metrics(tenant.name)
        )

    @property
    def ready(self) -> bool:
        return all(receiver.ready for receiver in self.receivers.values())

    def metrics(self, only: str | None = None) -> str:
        """Prometheus text: each tenant's samples (``only`` that one's) labelled
        ``tenant="NAME"``."""
        samples: list[Sample] = []
        histograms: list[Histogram] = []
        for name, receiver in self.receivers.items():
            if only is not None and name != only:
                continue
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
