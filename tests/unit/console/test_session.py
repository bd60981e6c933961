"""The console's session cookie and CSRF tokens, without services."""

from __future__ import annotations

from services.gateway.console.session import LIFETIME_S, SessionSigner, valid_csrf


def test_a_signed_session_names_its_tenant_and_key_until_it_expires() -> None:
    signer = SessionSigner(b"k" * 32)
    cookie = signer.sign("tenant-1", "key.with.dots", now=1000)
    session = signer.verify(cookie, now=1000 + LIFETIME_S - 1)
    assert session is not None and (session.tenant_id, session.key_id) == ("tenant-1", "key.with.dots")
    assert signer.verify(cookie, now=1000 + LIFETIME_S + 1) is None


def test_a_tampered_or_foreign_cookie_is_refused() -> None:
    signer = SessionSigner(b"k" * 32)
    cookie = signer.sign("tenant-1", "key-1", now=1000)
    body, mac = cookie.rsplit(".", 1)
    other = SessionSigner(b"x" * 32).sign("tenant-1", "key-1", now=1000)
    forged_tenant = signer.sign("tenant-2", "key-1", now=1000).split(".")[0] + cookie[cookie.index("."):]
    for bad in (other, forged_tenant, body + "." + mac[:-1] + ("A" if mac[-1] != "A" else "B"), "", "a.b.c",
                None):
        assert signer.verify(bad, now=1000) is None, bad


def test_csrf_tokens_belong_to_one_session() -> None:
    signer = SessionSigner(b"k" * 32)
    one, two = signer.sign("t", "a", now=1), signer.sign("t", "b", now=1)
    assert valid_csrf(signer, one, signer.csrf(one))
    assert not valid_csrf(signer, two, signer.csrf(one))
    assert not valid_csrf(signer, one, None) and not valid_csrf(signer, None, signer.csrf(one))
