/// Why an event stream cannot be opened or go on (`Problems+Domain.swift` says it in HTTP).
enum EventError: Error, Equatable {
    /// The caller or this process holds as many streams as it may.
    case tooManyStreams
    /// The service is shutting down, or the log's horizon cannot be read.
    case unavailable
}
