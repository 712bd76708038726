#!/usr/bin/env python3
"""A loopback SMTP server for tests (aiosmtpd): STARTTLS or implicit TLS, AUTH PLAIN/LOGIN,
every accepted message written to DIR/new/<ns>-<n>.eml (atomically, via DIR/tmp) with a
<same>.json envelope beside it. Failures on demand:
  * per recipient (safe for tests running in parallel): local part with
      +perm  -> 550 at RCPT     +temp -> 451 at RCPT
      +dataperm -> 554 after DATA    +drop -> connection closed after DATA, nothing stored
      +lostack -> message stored, then the connection closed before the 250 (RFC 1047's gap)
  * for everyone: the first word of --control FILE (re-read per command):
      accept (default) | tempfail (421 at MAIL, closes) | permfail (554 at DATA)
  * "down": stop the process (SIGTERM) and start it again on the same port and DIR.
Each .json also holds the message as a reader sees it (decoded Subject, From, To, Message-ID,
Date, and the text/plain and text/html parts), so tests need no MIME parser of their own.
Used by the Swift tests (Tests/TestMailServer) and as `make run`'s mail catcher.
Prints "READY <port>" on stdout once listening."""
import argparse, asyncio, email, email.policy, json, logging, os, signal, ssl, sys, time, itertools, warnings
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

counter = itertools.count()

class Handler:
    def __init__(self, maildir, control):
        self.maildir, self.control = maildir, control
        for sub in ("tmp", "new"):
            os.makedirs(os.path.join(maildir, sub), exist_ok=True)

    def mode(self):
        try:
            with open(self.control) as f:
                return (f.read().split() or ["accept"])[0]
        except (TypeError, FileNotFoundError):
            return "accept"

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        if self.mode() == "tempfail":
            # close just after the reply is written: the client sees 421, then EOF
            asyncio.get_running_loop().call_later(0.05, server.transport.close)
            return "421 4.3.2 service not available, closing"
        envelope.mail_from, envelope.mail_options = address, mail_options
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@")[0]
        if "+perm" in local:
            return "550 5.1.1 no such user"
        if "+temp" in local:
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        locals_ = [a.split("@")[0] for a in envelope.rcpt_tos]
        if any("+drop" in l for l in locals_):
            server.transport.abort()  # no 250: the client cannot know (RFC 1047)
            return "250 never sent"
        if self.mode() == "permfail" or any("+dataperm" in l for l in locals_):
            return "554 5.6.0 message rejected"
        name = f"{time.time_ns()}-{next(counter)}"
        tmp = os.path.join(self.maildir, "tmp", name)
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        parts = {}
        for part in parsed.walk():
            if part.get_content_type() in ("text/plain", "text/html") and part.get_content_type() not in parts:
                parts[part.get_content_type()] = part.get_content()
        with open(tmp + ".json", "w") as f:
            json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                       "login": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
                       "tls": session.ssl is not None or server.transport.get_extra_info("sslcontext") is not None,
                       "subject": str(parsed["Subject"] or ""), "from": str(parsed["From"] or ""),
                       "to": str(parsed["To"] or ""), "message_id": str(parsed["Message-ID"] or ""),
                       "date": str(parsed["Date"] or ""), "content_type": parsed.get_content_type(),
                       "text": parts.get("text/plain", ""), "html": parts.get("text/html", "")}, f)
        with open(tmp + ".eml", "wb") as f:
            f.write(envelope.original_content)
        # JSON first, .eml last: a reader that sees the .eml sees its envelope too.
        os.rename(tmp + ".json", os.path.join(self.maildir, "new", name + ".json"))
        os.rename(tmp + ".eml", os.path.join(self.maildir, "new", name + ".eml"))
        if any("+lostack" in l for l in locals_):
            server.transport.abort()  # stored, but the client never hears the 250
        return f"250 2.0.0 OK queued as {name}"

def main():
    # A test that offers a wrong certificate or password on purpose is no news: keep stderr quiet.
    warnings.filterwarnings("ignore")
    logging.getLogger("mail.log").setLevel(logging.CRITICAL)
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--tls", choices=["starttls", "implicit"], default="starttls")
    p.add_argument("--cert", required=True); p.add_argument("--key", required=True)
    p.add_argument("--maildir", required=True); p.add_argument("--control")
    p.add_argument("--user", default="sender"); p.add_argument("--password", default="secret")
    a = p.parse_args()
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(a.cert, a.key)

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (mechanism in ("PLAIN", "LOGIN") and isinstance(auth_data, LoginPassword)
              and auth_data.login == a.user.encode() and auth_data.password == a.password.encode())
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    port = a.port
    if port == 0:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    kw = dict(hostname="127.0.0.1", port=port, authenticator=authenticator, auth_required=True,
              server_hostname="localhost", ready_timeout=10)
    if a.tls == "starttls":
        kw.update(tls_context=ctx, require_starttls=True)
    else:
        # aiosmtpd 1.4 does not notice implicit TLS when deciding to offer AUTH
        # (aio-libs/aiosmtpd#281, #274): the whole connection is TLS, so this is safe.
        kw.update(ssl_context=ctx, auth_require_tls=False)
    c = Controller(Handler(a.maildir, a.control), **kw)
    c.start()
    print(f"READY {port}", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    c.stop()

if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
