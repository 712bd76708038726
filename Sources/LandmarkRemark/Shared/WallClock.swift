import Foundation

/// The time as the service's rules read it (a code's expiry, a message's next attempt), passed
/// to SQL as a parameter rather than read there with now(): tests run the service on a clock
/// they move, so "dead after 15 minutes" is tested without waiting 15 minutes.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    public static let system = WallClock { Date() }

    public func now() -> Date { read() }
}
