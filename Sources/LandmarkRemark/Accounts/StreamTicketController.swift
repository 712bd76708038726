import HTTPTypes
import Hummingbird

/// `POST /v1/events/tickets`: a single-use credential that opens the event stream where
/// headers cannot be sent (a browser's `EventSource`). An account's credential like the
/// access token it is issued for, so it lives with accounts; the stream only redeems it.
struct StreamTicketController {
    let tickets: StreamTicketService

    /// Behind the access-token `Authenticator`.
    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post(use: issue)
    }

    @Sendable func issue(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<StreamTicket> {
        let identity = try context.requireIdentity()
        guard let ticket = try await tickets.issue(for: identity, logger: context.logger) else { throw AccountError.tooManyStreamTickets }
        // A credential: no cache may keep it.
        return EditedResponse(status: .created, headers: [.cacheControl: "no-store"], response: ticket)
    }
}
