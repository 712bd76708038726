import Foundation
import Photos

/// A note's photos as the note keeps them (`notes.photos`, migration 0032): eight numbers a
/// photo, so that every read of a note writes its photos from the row itself, with no join.
enum PhotoSummaries {
    static let stride = 8

    /// The API's photos from the column, in order; a malformed column (never written so:
    /// the table's CHECK holds its shape) gives what it can.
    static func photos(_ numbers: [Int64]) -> [Photo] {
        guard !numbers.isEmpty else { return [] }
        return Swift.stride(from: 0, to: numbers.count - stride + 1, by: stride).map { start in
            let n = numbers[start..<(start + stride)].map { $0 }
            func variant(_ size: PhotoSize, _ width: Int64, _ height: Int64) -> PhotoVariant {
                PhotoVariant(url: "/v1/photos/\(n[0])/\(size.rawValue)", width: Int(width), height: Int(height))
            }
            return Photo(
                id: n[0], width: Int(n[2]), height: Int(n[3]), createdAt: Date(timeIntervalSince1970: Double(n[1]) / 1_000_000),
                variants: PhotoVariants(thumb: variant(.thumb, n[6], n[7]), display: variant(.display, n[4], n[5]), full: variant(.full, n[2], n[3])))
        }
    }

    /// The column's numbers for `photo`, stored as `id` at `createdAt`.
    static func numbers(id: Int64, createdAt: Date, photo: SanitisedPhoto) -> [Int64] {
        func size(_ size: PhotoSize) -> [Int64] {
            [Int64(photo.variants[size]?.width ?? 0), Int64(photo.variants[size]?.height ?? 0)]
        }
        return [id, Int64((createdAt.timeIntervalSince1970 * 1_000_000).rounded())] + size(.full) + size(.display) + size(.thumb)
    }

    /// `numbers` without the photo `id`.
    static func removing(_ id: Int64, from numbers: [Int64]) -> [Int64] {
        Swift.stride(from: 0, to: numbers.count, by: stride).filter { numbers[$0] != id }
            .flatMap { numbers[$0..<min($0 + stride, numbers.count)] }
    }
}
