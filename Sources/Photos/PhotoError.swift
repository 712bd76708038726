/// Why a photo was not accepted, or could not be processed at all.
public enum PhotoError: Error, Sendable, Equatable {
    /// Not JPEG, PNG, WebP or HEIC/HEIF by its bytes (an SVG, HTML, GIF, a ZIP, ...).
    case unsupportedFormat
    /// More bytes than the limit.
    case tooManyBytes(limit: Int)
    /// The header declares more pixels than the limit; nothing was decoded.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The decoder refused the file, crashed, ran out of memory or CPU, or hung: with the
    /// reason, for the log (never the decoder's own words to the client).
    case unreadable(String)
    /// The worker could not be started at all (bubblewrap or libvips missing, no user
    /// namespaces): the operator's problem, not the upload's.
    case sandboxUnavailable(String)
}
