import Foundation

/// `GET /v1/notes/clusters`: the notes inside `bbox` grouped into a grid that follows
/// the map's zoom, for drawing a zoomed-out map or a pile of notes at one spot.
///
/// The grid is the web map tile grid: at zoom z the world is 2^z tiles across (Web
/// Mercator, as the map draws it), and each tile is split into 4 × 4 cells, so a cell
/// is 64 pixels of a 256-pixel tile wherever the map is. Cells align with tile edges,
/// so panning does not reshuffle clusters.
struct NoteClusters: Sendable {
    /// Cells per tile along each axis.
    static let cellsPerTile = 4
    /// A viewport on a real screen covers a few hundred cells (1920 × 1080 pixels is 30 × 17
    /// cells, a 4K screen 60 × 34); more means a box far larger than the zoom can show (the
    /// whole world at zoom 5 or more), which makes the database group every note of the box
    /// into thousands of clusters (3.7 s and 11 MB for the world at zoom 7 on 300,000 notes).
    /// Refused up front with `422 query_too_broad` rather than left to the statement timeout.
    static let maximumCells = 10_000
    /// Web Mercator's latitude limit; notes nearer the poles are drawn at its edge.
    static let mercatorLimit = 85.0511287798066

    var filters: NoteFilters
    let bbox: BoundingBox
    let zoom: Int

    /// Reads `bbox` (required), `zoom` (required, 0–22) and the list's filters.
    init(_ parameters: inout QueryParameters) throws {
        filters = try NoteFilters(&parameters)
        guard let zoom = try parameters.integer("zoom", in: 0...22) else { throw AppError.malformed("zoom is required") }
        guard let bbox = filters.bbox else { throw AppError.malformed("bbox is required") }
        try parameters.finish()
        self.zoom = zoom
        self.bbox = bbox
        guard Self.cellCount(bbox, gridSize: gridSize) <= Double(Self.maximumCells) else {
            throw AppError.queryTooBroad(
                field: "bbox", "covers more than \(Self.maximumCells) grid cells at zoom \(zoom); use a smaller box or a lower zoom")
        }
    }

    /// Cells along each axis of the whole world.
    var gridSize: Int { Self.cellsPerTile << zoom }

    /// How many grid cells the box touches, near enough to refuse absurd requests.
    static func cellCount(_ box: BoundingBox, gridSize: Int) -> Double {
        let widthDegrees = box.longitudeRanges.reduce(0) { $0 + ($1.1 - $1.0) }
        let width = (widthDegrees / 360 * Double(gridSize)).rounded(.up) + 1
        let height = ((mercatorY(box.minLat) - mercatorY(box.maxLat)) * Double(gridSize)).rounded(.up) + 1
        return width * height
    }

    /// Web Mercator y in [0, 1], 0 at the top (north), as tile numbers count.
    static func mercatorY(_ lat: Double) -> Double {
        let clamped = min(max(lat, -mercatorLimit), mercatorLimit) * .pi / 180
        return (1 - asinh(tan(clamped)) / .pi) / 2
    }
}
