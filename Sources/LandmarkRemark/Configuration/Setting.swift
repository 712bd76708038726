import Credentials
import Foundation

/// One `LR_*` environment variable, declared once: its name, what it means, what values it
/// takes, and how it is read into `AppConfiguration`. The reader (`AppConfiguration.init(environment:)`),
/// `.env.example` and the operations guide's table (`landmark-remark settings`) all come from
/// these declarations; the defaults are the configuration's own initial values, shown here
/// by reading them from `AppConfiguration()`.
struct Setting {
    let name: String
    /// What it means, one paragraph; `.env.example` wraps it into comments.
    let help: String
    /// What values it takes: "1 to 500", "true or false".
    let allowed: String
    /// The value `.env.example` shows: the default, or empty for "unset".
    let example: String
    /// Whether an empty value means "the default" (most settings) or is a value of its own.
    let emptyIsDefault: Bool
    /// Reads a value that is set into the configuration; throws `ConfigurationError`.
    let read: (String, inout AppConfiguration) throws -> Void

    init(
        _ name: String, allowed: String, example: String, emptyIsDefault: Bool = true, help: String,
        read: @escaping (String, inout AppConfiguration) throws -> Void
    ) {
        (self.name, self.allowed, self.example, self.emptyIsDefault, self.help, self.read) = (name, allowed, example, emptyIsDefault, help, read)
    }

    /// `text` as a whole number in `range`, or the error that names the variable.
    static func whole(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw ConfigurationError(variable: name, message: "must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }

    /// The bytes of standard base64 (what `openssl rand -base64 32` prints) or base64url,
    /// padded or not.
    static func base64(_ text: some StringProtocol) -> [UInt8]? {
        let urlSafe = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return Base64URL.decode(urlSafe)
    }

    /// A whole number in `range`.
    static func integer(_ name: String, _ path: WritableKeyPath<AppConfiguration, Int>, _ range: ClosedRange<Int>, help: String) -> Setting {
        Setting(name, allowed: "\(range.lowerBound) to \(range.upperBound)", example: "\(AppConfiguration()[keyPath: path])", help: help) {
            text, configuration in configuration[keyPath: path] = try whole(text, name, range)
        }
    }

    /// A duration given as a whole number of `unit`s in `range`.
    static func duration(
        _ name: String, _ path: WritableKeyPath<AppConfiguration, Duration>, _ unit: DurationUnit, _ range: ClosedRange<Int>, help: String
    ) -> Setting {
        Setting(name, allowed: "\(range.lowerBound) to \(range.upperBound) \(unit.name)", example: "\(unit.count(AppConfiguration()[keyPath: path]))", help: help) {
            text, configuration in configuration[keyPath: path] = unit.duration(try whole(text, name, range))
        }
    }

    /// Any text; `example`, when given, is what `.env.example` shows instead of the default.
    static func text(
        _ name: String, _ path: WritableKeyPath<AppConfiguration, String>, allowed: String = "text", example: String? = nil, help: String
    ) -> Setting {
        Setting(name, allowed: allowed, example: example ?? AppConfiguration()[keyPath: path], help: help) { text, configuration in
            configuration[keyPath: path] = text
        }
    }

    /// `true` or `false` (also 1/0, yes/no, on/off).
    static func boolean(_ name: String, _ path: WritableKeyPath<AppConfiguration, Bool>, help: String) -> Setting {
        Setting(name, allowed: "true or false", example: "\(AppConfiguration()[keyPath: path])", help: help) { text, configuration in
            switch text.lowercased() {
            case "1", "true", "yes", "on": configuration[keyPath: path] = true
            case "0", "false", "no", "off": configuration[keyPath: path] = false
            default: throw ConfigurationError(variable: name, message: "must be true or false, not \"\(text)\"")
            }
        }
    }
}

/// The unit a duration setting is written in (its name says which: `_MS`, `_SECONDS`).
enum DurationUnit {
    case milliseconds, seconds

    var name: String { self == .milliseconds ? "ms" : "s" }

    func duration(_ count: Int) -> Duration { self == .milliseconds ? .milliseconds(count) : .seconds(count) }

    func count(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return self == .milliseconds ? seconds * 1000 + attoseconds / 1_000_000_000_000_000 : seconds
    }
}

/// Settings that belong together, as `.env.example` and the operations guide group them.
struct SettingGroup {
    let title: String
    let settings: [Setting]
}

/// A setting with a bad value; the message names the variable and what it must be.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let variable: String
    public let message: String
    public var description: String { "\(variable) \(message)" }
}
