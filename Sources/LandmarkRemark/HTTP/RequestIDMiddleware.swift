import Hummingbird

/// Gives every request its id: the client's `X-Request-Id` when it is a sane token, so a call
/// can be traced end to end, else a new one. Every log line of the request carries it, and
/// the response echoes it, problems included.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.requestID = Self.requestID(from: request.headers[.requestID])
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        var response = try await next(request, context)
        response.headers[.requestID] = context.requestID
        return response
    }

    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128,
            header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        {
            return header
        }
        var generator = SystemRandomNumberGenerator()
        return hex16(generator.next()) + hex16(generator.next())
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// Resolves the client's address: the TCP peer, or `X-Forwarded-For` when the peer is a
/// trusted proxy (`TrustedProxies`). Throttles, fair shares and the access log use it.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        context.clientAddress = trustedProxies.clientAddress(peer: peer, forwardedFor: request.headers[.xForwardedFor])
        return try await next(request, context)
    }
}

/// The one log line per request, written after the response (a problem included) is known.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "route": .string(context.endpointPath ?? "unmatched"),
            "status": .stringConvertible(response.status.code),
            "tenant": .string(context.tenantTag.value ?? "-"),
            "client": .string(context.clientAddress),
            "duration_ms": .string(Self.format(milliseconds)),
        ])
        return response
    }

    /// Two decimals, without `String(format:)` (Foundation's format parser).
    private static func format(_ milliseconds: Double) -> String {
        let hundredths = Int((milliseconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
