import Hummingbird

/// `PUT` and `DELETE /v1/me/devices/{device_token}`: where the caller's pushes go.
struct DevicesController {
    let devices: DeviceService
    let bodyLimit: Int

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .put(":device_token", use: register)
            .delete(":device_token", use: unregister)
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        var request = request
        let identity = try context.requireIdentity()
        let token = try Self.token(context)
        let registration = try await request.decode(DeviceRegistration.self, context: context, limit: bodyLimit)
        try await devices.register(token, registration, by: identity, logger: context.logger)
        return .noContent
    }

    @Sendable func unregister(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        try await devices.unregister(try Self.token(context), by: identity, logger: context.logger)
        return .noContent
    }

    private static func token(_ context: AppRequestContext) throws -> String {
        guard let token = context.parameters.get("device_token").flatMap(DeviceRegistration.token) else { throw PushError.malformedDeviceToken }
        return token
    }
}
