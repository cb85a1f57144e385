"""The per-user cache of the simulator's seeded RSA keys (``kit.sim.keycache``): a hit is exactly
the key generation gives, the file is private, a damaged file is replaced, ``off`` keeps nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from joserfc.jwk import RSAKey

from kit.sim import keycache
from kit.sim.crypto import SimKeys


@pytest.fixture(scope="module")
def generated() -> bytes:
    """Seed 11's key generated without any cache (a fifth of a second: once for the module)."""
    return keycache.generate_rsa_pem(11, 2048)


def test_a_cache_hit_is_the_generated_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes
) -> None:
    monkeypatch.setenv(keycache.CACHE_VARIABLE, str(tmp_path / "keys"))
    assert keycache.seeded_rsa_pem(11) == generated  # a miss: generated, then kept
    (kept,) = (tmp_path / "keys").iterdir()
    assert kept.read_bytes() == generated
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    kept.write_bytes(kept.read_bytes())  # still ours: a hit reads it back unchanged
    assert keycache.seeded_rsa_pem(11) == generated


def test_a_damaged_file_is_generated_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes
) -> None:
    monkeypatch.setenv(keycache.CACHE_VARIABLE, str(tmp_path))
    keycache.seeded_rsa_pem(11)
    (kept,) = tmp_path.glob("rsa-*.pem")
    kept.write_bytes(b"-----BEGIN RSA PRIVATE KEY-----\nnot a key\n")
    assert keycache.seeded_rsa_pem(11) == generated
    assert kept.read_bytes() == generated


def test_off_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes) -> None:
    monkeypatch.setenv(keycache.CACHE_VARIABLE, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert keycache.cache_dir() is None
    assert keycache.seeded_rsa_pem(11) == generated
    assert list(tmp_path.iterdir()) == []


def test_the_default_directory_is_the_users_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(keycache.CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert keycache.cache_dir() == tmp_path / "partner-api-kit" / "sim-keys"


def test_the_key_read_back_is_the_key_openssl_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes
) -> None:
    """Read back without OpenSSL's key check, the key is the one a checked import gives."""
    monkeypatch.setenv(keycache.CACHE_VARIABLE, str(tmp_path))
    keycache.seeded_rsa_pem(11)
    cached = RSAKey.import_key(keycache.load_private(keycache.seeded_rsa_pem(11)))
    checked = RSAKey.import_key(generated)  # joserfc's import: OpenSSL checks the key
    assert cached.as_dict(private=True) == checked.as_dict(private=True)
    assert cached.thumbprint() == checked.thumbprint()


def test_seed_7_publishes_the_same_key_ids_as_before() -> None:
    """The kids every stored notebook output shows (generation unchanged, the cache or not)."""
    assert repr(SimKeys.from_seed(7)) == (
        "SimKeys(kids=['enc-rsa-cKWDQf_ADqkiXIfK', 'enc-ec-vUfYs4RUkx0bpY00', 'sig-ec-0ngQfjSTDqAzz00i'])"
    )


# -- a key read back is checked: its folders, its file, the key itself ------------------------


def _inconsistent(pem: bytes) -> bytes:
    """The key of ``pem`` with a private exponent that does not invert the public one (loads
    without OpenSSL's check, as the cache loads)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    n = keycache.load_private(pem).private_numbers()
    bad = rsa.RSAPrivateNumbers(n.p, n.q, n.d + 2, n.dmp1, n.dmq1, n.iqmp, n.public_numbers)
    key = bad.private_key(unsafe_skip_rsa_key_validation=True)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def test_a_key_that_does_not_add_up_is_generated_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes
) -> None:
    monkeypatch.setenv(keycache.CACHE_VARIABLE, str(tmp_path))
    keycache.seeded_rsa_pem(11)
    (kept,) = tmp_path.glob("rsa-*.pem")
    kept.write_bytes(_inconsistent(generated))
    assert keycache.seeded_rsa_pem(11) == generated
    assert kept.read_bytes() == generated
    with pytest.raises(ValueError, match="inverse"):
        keycache.checked(_inconsistent(generated), 2048)


@pytest.mark.slow  # seeded 2048-bit RSA keys generated: ≈10 s
@pytest.mark.parametrize("where", ["named", "default"])
def test_a_key_in_a_folder_others_can_write_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes, where: str
) -> None:
    if where == "named":
        monkeypatch.setenv(keycache.CACHE_VARIABLE, str(tmp_path / "keys"))
        folder = tmp_path / "keys"
    else:
        monkeypatch.delenv(keycache.CACHE_VARIABLE, raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        folder = tmp_path / "partner-api-kit" / "sim-keys"
    keycache.seeded_rsa_pem(11)
    (kept,) = folder.glob("rsa-*.pem")
    other = keycache.generate_rsa_pem(12, 2048)  # a good key, not seed 11's: planted
    kept.write_bytes(other)
    folder.chmod(0o777)
    with pytest.warns(UserWarning, match="writable by others"):
        assert keycache.seeded_rsa_pem(11) == generated
    assert kept.read_bytes() == generated and stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a folder away"
)
def test_a_named_folder_of_another_user_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes
) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    kept = keycache._file(folder, 11, 2048)
    kept.write_bytes(keycache.generate_rsa_pem(12, 2048))
    os.chown(folder, 65534, 65534)
    monkeypatch.setenv(keycache.CACHE_VARIABLE, str(folder))
    with pytest.warns(UserWarning, match="another user"):
        assert keycache.seeded_rsa_pem(11) == generated
    assert kept.read_bytes() != generated  # not theirs to change: left as it was
