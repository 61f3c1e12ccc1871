"""The security scenarios of the Python drivers (compat/README.md,
"Security"); mirrors compat/go/secure.go. Each produces SECURE_RECORDS
records over one secured listener of the suite's node, reads them back
from the start of the topic's one partition and checks them in order;
scram-ssl also checks that a wrong password is refused with an
authentication error."""

import base64
import json
import os
import re
import time

from common import SECURITY_SCENARIOS, Failed, NotApplicable, PassWith

SECURE_RECORDS = 200

AUTH_ERROR = re.compile(r"(?i)authenticat|SASL|credentials")


class Settings:
    """How one security scenario connects."""

    def __init__(self, scenario):
        self.scenario = scenario
        self.user = os.environ.get("COMPAT_SASL_USER", "")
        self.password = os.environ.get("COMPAT_SASL_PASSWORD", "")
        self.ca = os.environ.get("COMPAT_SSL_CA", "")
        self.cert = os.environ.get("COMPAT_SSL_CERT", "")
        self.key = os.environ.get("COMPAT_SSL_KEY", "")
        self.protocol, self.mechanism, address = {
            "scram-ssl": ("SASL_SSL", "SCRAM-SHA-512", "COMPAT_SASL_SSL_BOOTSTRAP"),
            "plain-ssl": ("SASL_SSL", "PLAIN", "COMPAT_SASL_SSL_BOOTSTRAP"),
            "mtls": ("SSL", None, "COMPAT_SSL_BOOTSTRAP"),
            "oauth": ("SASL_PLAINTEXT", "OAUTHBEARER", "COMPAT_SASL_PLAINTEXT_BOOTSTRAP"),
        }[scenario]
        self.bootstrap = os.environ.get(address, "")
        if not (self.bootstrap and self.user and self.ca):
            raise Failed("the security scenarios need the runner's COMPAT_SASL_*/COMPAT_SSL_* environment")

    def tls(self):
        return self.protocol.endswith("SSL")

    def wrong_password(self):
        wrong = Settings(self.scenario)
        wrong.password = "not-" + self.password
        return wrong


def unsecured_token(sub):
    """An unsecured JWS (KIP-255: header {"alg":"none"}, no signature) naming
    sub, valid for an hour."""
    def enc(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    now = int(time.time())
    claims = json.dumps({"sub": sub, "iat": now, "exp": now + 3600}).encode()
    return enc(b'{"alg":"none"}') + "." + enc(claims) + "."


def value_of(scenario, i):
    return "%s-%d" % (scenario, i)


def scenario(name, produce, consume, refused, skip=None):
    """The scenario function for name, from one client's produce(settings,
    topic, values), consume(settings, topic, n) -> values and
    refused(settings, topic) -> the client's error or None."""
    def run(env):
        if skip:
            reason = skip(name)
            if reason:
                raise NotApplicable(reason)
        s = Settings(name)
        topic = env.topic(name)
        values = [value_of(name, i) for i in range(SECURE_RECORDS)]
        env.log("%s: producing %d records over %s %s" % (name, SECURE_RECORDS, s.protocol, s.mechanism or ""))
        produce(env, s, topic, values)
        got = consume(env, s, topic, SECURE_RECORDS)
        if got != values:
            bad = next((i for i, (a, b) in enumerate(zip(got, values)) if a != b), min(len(got), len(values)))
            raise Failed("read %d records back; the first difference is at %d" % (len(got), bad))
        if name != "scram-ssl":
            return
        err = refused(env, s.wrong_password(), topic)
        if err is None:
            raise Failed("a wrong SCRAM password was accepted")
        if not AUTH_ERROR.search(str(err)):
            raise Failed("a wrong SCRAM password failed without an authentication error: %s" % err)
        raise PassWith("wrong password refused: %s" % str(err)[:120])
    return run


def scenarios(produce, consume, refused, skip=None):
    return {name: scenario(name, produce, consume, refused, skip) for name in SECURITY_SCENARIOS}
