/// Where and how a message leaves: an SMTP relay, always over TLS, always with a login.
///
/// The URL names the TLS mode the way curl (and most relays' documentation) does:
/// `smtp://host:587` is submission with STARTTLS, which is then required (a relay that does
/// not offer it is refused, never used in clear text); `smtps://host:465` is implicit TLS.
public struct SMTPEndpoint: Sendable, Hashable {
    public enum Security: String, Sendable, Hashable {
        /// Plain connection upgraded with STARTTLS before anything else is said.
        case startTLS
        /// TLS from the first byte (RFC 8314's submissions port).
        case implicitTLS
    }

    /// The SASL mechanisms relays accept for a login and password.
    public enum Authentication: String, Sendable, Hashable, CaseIterable {
        case plain = "PLAIN"
        case login = "LOGIN"
    }

    public let host: String
    public let port: Int
    public let security: Security
    public var username: String
    public var password: String
    public var authentication: Authentication
    /// A PEM file of certificate authorities to trust instead of the system's (a private
    /// relay's CA, or the tests' own certificate); nil trusts the system's store.
    public var caFile: String?
    /// The whole connection's setup: greeting, STARTTLS and AUTH (curl counts them all in it).
    public var connectTimeout: Duration
    /// One whole message, connection included.
    public var timeout: Duration

    /// - Throws: `MailError.invalidEndpoint` for anything but `smtp://` or `smtps://` with a
    ///   host, an optional port and no path, credentials or query.
    public init(
        url: String, username: String, password: String, authentication: Authentication = .plain, caFile: String? = nil,
        connectTimeout: Duration = .seconds(10), timeout: Duration = .seconds(30)
    ) throws {
        let (scheme, rest) = try Self.split(url)
        switch scheme {
        case "smtp": security = .startTLS
        case "smtps": security = .implicitTLS
        default: throw MailError.invalidEndpoint("the scheme must be smtp:// (STARTTLS) or smtps:// (implicit TLS)")
        }
        let authority = rest.hasSuffix("/") ? String(rest.dropLast()) : rest
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ \r\n".contains($0) }) else {
            throw MailError.invalidEndpoint("expected scheme://host[:port], without a path, query or credentials")
        }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
                throw MailError.invalidEndpoint("the port must be a number from 1 to 65535")
            }
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = authority
            port = security == .startTLS ? 587 : 465
        }
        guard !host.isEmpty else { throw MailError.invalidEndpoint("the host is missing") }
        guard !username.isEmpty, !password.isEmpty else {
            throw MailError.invalidEndpoint("a relay needs a login: the username and password must not be empty")
        }
        self.username = username
        self.password = password
        self.authentication = authentication
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.timeout = timeout
    }

    /// The URL curl is given.
    public var url: String { "\(security == .startTLS ? "smtp" : "smtps")://\(host):\(port)" }

    private static func split(_ url: String) throws -> (String, String) {
        guard let range = url.range(of: "://") else { throw MailError.invalidEndpoint("expected smtp://host:port or smtps://host:port") }
        return (url[..<range.lowerBound].lowercased(), String(url[range.upperBound...]))
    }
}
