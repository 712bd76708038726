import CCurl
import Foundation

/// Sends messages through libcurl's SMTP, one at a time, on the calling thread.
///
/// Why libcurl: a maintained C library already on every Debian host (and in the image), with
/// STARTTLS and implicit TLS through the same OpenSSL the service links, AUTH PLAIN and LOGIN,
/// dot-stuffing, and MIME (boundaries, quoted-printable) in `curl_mime`. What it does not do
/// is in `MailHeaders`. One easy handle keeps its connection to a relay between messages
/// (one EHLO, STARTTLS and AUTH for a batch), so an instance is used by one thread at a time:
/// `MailTransport` gives it one.
public final class SMTPClient {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let transcript = Transcript()

    public init() {
        SMTPClient.initialiseOnce
        handle = curl_easy_init()
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// curl_global_init is not thread-safe before curl 7.84 and must run before any handle.
    private static let initialiseOnce: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// Sends `message` through `endpoint` and says what became of it. Blocks for at most the
    /// endpoint's `timeout`. A message this client cannot express (a bad header) throws.
    public func send(_ message: MailMessage, via endpoint: SMTPEndpoint) throws -> SMTPOutcome {
        let headerLines = try message.headerLines()
        errorBuffer[0] = 0
        transcript.reset()
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in headerLines { headers = curl_slist_append(headers, line) }
        defer { curl_slist_free_all(headers) }
        let recipients = curl_slist_append(nil, "<\(message.to)>")
        defer { curl_slist_free_all(recipients) }

        let h = handle
        ccurl_setopt_string(h, CURLOPT_URL, endpoint.url)
        ccurl_setopt_long(h, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
        ccurl_setopt_string(h, CURLOPT_USERNAME, endpoint.username)
        ccurl_setopt_string(h, CURLOPT_PASSWORD, endpoint.password)
        ccurl_setopt_string(h, CURLOPT_LOGIN_OPTIONS, "AUTH=\(endpoint.authentication.rawValue)")
        ccurl_setopt_string(h, CURLOPT_CAINFO, endpoint.caFile)
        ccurl_setopt_string(h, CURLOPT_MAIL_FROM, "<\(message.from)>")
        ccurl_setopt_slist(h, CURLOPT_MAIL_RCPT, recipients)
        ccurl_setopt_slist(h, CURLOPT_HTTPHEADER, headers)
        ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, endpoint.connectTimeout.milliseconds)
        ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, endpoint.timeout.milliseconds)
        // No SIGALRM for timeouts: the process has many threads.
        ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        ccurl_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorBuffer)
        // The debug callback sees each command sent (never logged: AUTH carries the password),
        // which is how a failure is placed at MAIL, RCPT or the message.
        ccurl_setopt_long(h, CURLOPT_VERBOSE, 1)
        ccurl_setopt_debug_function(h, Transcript.callback)
        ccurl_setopt_pointer(h, CURLOPT_DEBUGDATA, Unmanaged.passUnretained(transcript).toOpaque())

        let mime = curl_mime_init(h)
        defer { curl_mime_free(mime) }
        for (body, type) in [(message.text, "text/plain; charset=utf-8"), (message.html, "text/html; charset=utf-8")] {
            let part = curl_mime_addpart(mime)
            // curl's quoted-printable encoder breaks lines only at CRLF (a bare LF becomes =0A).
            let crlf = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
            curl_mime_data(part, crlf, crlf.utf8.count)
            curl_mime_type(part, type)
            curl_mime_encoder(part, "quoted-printable")
        }
        ccurl_setopt_mime(h, mime)

        let code = curl_easy_perform(h)
        var reply = 0
        ccurl_getinfo_long(h, CURLINFO_RESPONSE_CODE, &reply)
        ccurl_setopt_mime(h, nil)
        let detail = String(cString: errorBuffer).isEmpty ? String(cString: curl_easy_strerror(code)) : String(cString: errorBuffer)
        return Self.outcome(curl: code, reply: reply, lastCommand: transcript.lastCommand, detail: detail)
    }

    /// RFC 5321's reply classes placed by the command they answered (see `SMTPOutcome`).
    static func outcome(curl: CURLcode, reply: Int, lastCommand: String, detail: String) -> SMTPOutcome {
        if curl == CURLE_OK { return .sent }
        let summary = "curl \(curl.rawValue): \(detail)"
        // 421: the relay is closing the channel, whatever was asked.
        if reply == 421 { return .relayUnavailable(code: reply, detail: summary) }
        switch lastCommand {
        case "RCPT":
            if (500..<600).contains(reply) { return .rejected(recipient: true, code: reply, detail: summary) }
            if (400..<500).contains(reply) { return .deferred(code: reply, detail: summary) }
        case "DATA":
            // 354 was the go-ahead: the body went out and the answer to it never came.
            if reply == 354 { return .unknown(detail: summary) }
            if (500..<600).contains(reply) { return .rejected(recipient: false, code: reply, detail: summary) }
            if (400..<500).contains(reply) { return .deferred(code: reply, detail: summary) }
        default:
            break
        }
        // Connecting, TLS, AUTH, a refused sender address, timeouts before the message:
        // nothing says this message is at fault.
        return .relayUnavailable(code: reply, detail: summary)
    }
}

/// The last SMTP command curl sent on the handle, kept by its debug callback.
private final class Transcript {
    var lastCommand = ""

    func reset() { lastCommand = "" }

    static let callback: curl_debug_callback = { _, type, data, size, context in
        guard type == CURLINFO_HEADER_OUT, let data, let context else { return 0 }
        let transcript = Unmanaged<Transcript>.fromOpaque(context).takeUnretainedValue()
        // Only the verb: the rest may be an address or, after AUTH, a credential. QUIT and RSET,
        // which curl sends after a failure, say nothing about where it failed.
        let bytes = UnsafeRawBufferPointer(start: data, count: min(size, 8))
        let verb = String(decoding: bytes.prefix { $0 != 0x20 && $0 != 0x0D && $0 != 0x0A }, as: UTF8.self).uppercased()
        if ["EHLO", "HELO", "STARTTLS", "AUTH", "MAIL", "RCPT", "DATA"].contains(verb) {
            transcript.lastCommand = verb
        }
        return 0
    }
}

extension Duration {
    /// Whole milliseconds, as curl's `_MS` options take them.
    var milliseconds: Int { Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000) }
}
