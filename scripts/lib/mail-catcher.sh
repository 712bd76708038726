# Sourced by scripts/lib/test-env.sh and scripts/run.sh: the loopback SMTP server that the
# tests and `make run` deliver mail to (scripts/test-smtp-server.py, aiosmtpd).

# install_mail_catcher DIR: aiosmtpd in a virtual environment under .build/smtp-venv (reused
# when present; sets MAIL_CATCHER_PYTHON), and a self-signed certificate for localhost and
# 127.0.0.1 in DIR (smtp-cert.pem, smtp-key.pem; kept when present), which the sending side
# trusts as its CA.
install_mail_catcher() {
    local venv=$PWD/.build/smtp-venv
    python3 -c 'import venv, ensurepip' 2>/dev/null || scripts/install-deps.sh python3-venv
    if ! "$venv/bin/python" -c 'import aiosmtpd, sys; sys.exit(aiosmtpd.__version__ != "1.4.6")' 2>/dev/null; then
        echo "installing aiosmtpd 1.4.6 into $venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "aiosmtpd==1.4.6"
    fi
    mkdir -p "$1"
    if [ ! -s "$1/smtp-cert.pem" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/smtp-key.pem" -out "$1/smtp-cert.pem" -days 3650 \
            -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
    fi
    MAIL_CATCHER_PYTHON="$venv/bin/python"
}
