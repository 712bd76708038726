/// A message or an endpoint that cannot be used as given (nothing was sent).
public enum MailError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidEndpoint(String)
    case invalidAddress(String)
    case invalidHeader(String)

    public var description: String {
        switch self {
        case .invalidEndpoint(let why): "invalid SMTP endpoint: \(why)"
        case .invalidAddress(let address): "invalid email address: \(address.debugDescription)"
        case .invalidHeader(let why): "invalid header: \(why)"
        }
    }
}
