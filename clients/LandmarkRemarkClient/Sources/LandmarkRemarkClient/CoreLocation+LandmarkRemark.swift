#if canImport(CoreLocation)
import CoreLocation

extension Coordinate {
    public init(_ coordinate: CLLocationCoordinate2D) {
        self.init(latitude: coordinate.latitude, longitude: coordinate.longitude)
    }

    public var clLocationCoordinate: CLLocationCoordinate2D {
        CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
    }
}
#endif

#if canImport(MapKit)
import MapKit

extension BoundingBox {
    /// The box a map region shows; one across the antimeridian has `west > east`.
    public init(_ region: MKCoordinateRegion) {
        self.init(
            center: Coordinate(region.center), latitudeDelta: region.span.latitudeDelta, longitudeDelta: region.span.longitudeDelta)
    }
}
#endif
