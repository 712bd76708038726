/// The sizes every accepted photo is rendered to, by the length of its long side. A variant
/// is never larger than the original: a 1000-pixel photo's `display` and `full` are both 1000.
public enum PhotoSize: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Lists and map popups.
    case thumb
    /// A phone's screen.
    case display
    /// A viewer zoomed in, or a large screen.
    case full

    public var longSide: Int {
        switch self {
        case .thumb: 256
        case .display: 1280
        case .full: 2048
        }
    }

    /// The JPEG quality: thumbnails are small on screen, so their artefacts are too.
    var quality: Int { self == .thumb ? 80 : 82 }

    public static func < (lhs: PhotoSize, rhs: PhotoSize) -> Bool { lhs.longSide < rhs.longSide }
}
