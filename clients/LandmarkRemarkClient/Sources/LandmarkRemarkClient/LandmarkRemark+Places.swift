import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

extension LandmarkRemark {
    /// Adds a custom place by naming a spot.
    @discardableResult
    public func createPlace(_ name: String, at coordinate: Coordinate) async throws -> Place {
        try await Self.perform {
            Place(try await api.createPlace(body: .json(.init(name: name, lat: coordinate.latitude, lng: coordinate.longitude))).created.body.json)
        }
    }

    public func place(id: String) async throws -> Place {
        try await Self.perform { Place(try await api.getPlace(path: .init(id: id)).ok.body.json) }
    }

    /// Renames a custom place you created.
    @discardableResult
    public func renamePlace(id: String, to name: String) async throws -> Place {
        try await Self.perform { Place(try await api.renamePlace(path: .init(id: id), body: .json(.init(name: name))).ok.body.json) }
    }

    /// Deletes a custom place you created; its notes stay, without a place.
    public func deletePlace(id: String) async throws {
        _ = try await Self.perform { try await api.deletePlace(path: .init(id: id)).noContent }
    }

    /// Every place the query matches, page by page as you iterate (nearest first with `near`).
    public func places(_ query: PlaceQuery = PlaceQuery()) -> Pages<Place> {
        Pages { cursor in
            try await Self.perform {
                let page = try await self.api.listPlaces(
                    query: .init(
                        near: query.near.map(NoteQuery.parameter),
                        radius_m: query.radiusMeters, bbox: query.bbox?.parameter, q: query.name, limit: query.pageSize, cursor: cursor)
                ).ok.body.json
                return Page(items: page.items.map(Place.init), nextCursor: page.next_cursor)
            }
        }
    }

    /// Another user's public profile.
    public func profile(username: String) async throws -> Profile {
        try await Self.perform {
            let profile = try await api.getUser(path: .init(username: username)).ok.body.json
            return Profile(id: profile.id, username: profile.username, createdAt: profile.created_at, noteCount: profile.note_count)
        }
    }
}
