import CCrypto

/// Reads OpenSSL's per-thread error queue.
enum OpenSSLError {
    /// Returns every queued error as text (oldest first) and empties the queue,
    /// so a later failure on the same pool thread does not report stale errors.
    static func drainQueue() -> String {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "unknown OpenSSL error" : messages.joined(separator: "; ")
    }
}
