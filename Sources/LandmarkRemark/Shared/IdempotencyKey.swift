import HTTPTypes
import Hummingbird

/// The `Idempotency-Key` header of a create (`IdempotentCreates`).
enum IdempotencyKey {
    /// 1–255 printable ASCII characters, else `400`; nil when absent.
    static func parse(_ headers: HTTPFields) throws -> String? {
        guard let key = headers[.idempotencyKey] else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw AppError.malformed("Idempotency-Key must be 1 to 255 printable characters")
        }
        return key
    }
}
