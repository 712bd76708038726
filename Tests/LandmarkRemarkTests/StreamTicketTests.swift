import Credentials
import Foundation
import HummingbirdTesting
import LandmarkRemark
import Postgres
import Testing

/// Stream tickets (`POST /v1/events/tickets`): how a browser's `EventSource`, which sends no
/// headers, opens `GET /v1/events`. Over real sockets, as a browser connects.
@Suite struct StreamTicketTests {
    @Test func aTicketOpensTheCallersStreamOnceWithoutHeaders() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let reader = try await client.signup("reader", tenant: tenant)
            let writer = try await client.signup("writer", tenant: tenant)
            let issued = try await client.call(.post, "/v1/events/tickets", token: reader.accessToken)
            #expect(issued.status == .created)
            #expect(issued.headers[.cacheControl] == "no-store")
            let ticket = try issued.decode(API.StreamTicket.self)
            #expect(ticket.ticket.hasPrefix("lr_st_"))
            #expect(ticket.expiresIn == 300, "the tests' configured lifetime")
            #expect(AppConfiguration().events.ticketLifetime == 30, "production's")

            let stream = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(ticket.ticket)", headers: [:])
            defer { stream.close() }
            #expect(stream.status == 200)
            let note = try await client.createNote(writer, "seen through a ticket", lat: 51.5, lng: -0.12)
            let event = try await stream.firstEvent("note.created", id: note.id)
            // The stream is the reader's: the note is someone else's, seen as such.
            #expect(try event?.note().isMine == false)

            let again = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(ticket.ticket)", headers: [:])
            #expect(again.status == 401)
            again.close()
        }
    }

    @Test func anExpiredTicketIsRefusedAndSpent() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.ticketLifetime = 5 }) { client, port in
            let account = try await client.signup("late", tenant: tenant)
            let ticket = try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self)
            #expect(ticket.expiresIn == 5)
            let hash = PostgresBytes(Tokens.sha256(ticket.ticket))
            let expiresIn = try await TestEnvironment.ownerScalar(
                "SELECT extract(epoch FROM expires_at - now())::float8 FROM stream_tickets WHERE ticket_hash = \(hash)", as: Double.self)
            // The setting, not the default of 30 s (how much of it is left depends on the machine's load).
            #expect(expiresIn <= 5)
            // Its expiry passes (moved back rather than waited for).
            try await TestEnvironment.withOwnerPool {
                try await $0.query("UPDATE stream_tickets SET expires_at = now() - interval '1 second' WHERE ticket_hash = \(hash)")
            }
            let stream = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(ticket.ticket)", headers: [:])
            #expect(stream.status == 401)
            stream.close()
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*) FROM stream_tickets WHERE ticket_hash = \(hash)", as: Int.self) == 0)
        }
    }

    @Test func aTicketDiesWithItsAccessTokenAndSoDoesItsStream() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(1) }) { client, port in
            let account = try await client.signup("leaving", tenant: tenant)
            let first = try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self)
            let second = try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self)
            let stream = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(first.ticket)", headers: [:])
            #expect(stream.status == 200)
            #expect(try await client.call(.post, "/v1/auth/logout", token: account.accessToken).status == .noContent)
            // The open stream checks the token it was opened with, as one opened with the header does.
            #expect(try await stream.waitForClose())
            let unused = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(second.ticket)", headers: [:])
            #expect(unused.status == 401)
            unused.close()
        }
    }

    @Test func aTicketOpensNothingButTheStreamOfItsOwnTenant() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let other = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("narrow", tenant: tenant)
            let ticket = { try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self).ticket }
            // Not a credential anywhere else.
            #expect(try await client.call(.get, "/v1/notes?ticket=\(try await ticket())").code == "unauthenticated")
            #expect(try await client.call(.get, "/v1/me?ticket=\(try await ticket())").code == "unauthenticated")
            // Not for another tenant, named or not.
            #expect(try await client.call(.get, "/v1/events?ticket=\(try await ticket())", tenant: other).code == "tenant_mismatch")
            // Nothing like one, and not two at once.
            #expect(try await client.call(.get, "/v1/events?ticket=lr_st_\(String(repeating: "A", count: 43))").code == "unauthenticated")
            #expect(try await client.call(.get, "/v1/events?ticket=\(String(repeating: "x", count: 5000))").code == "unauthenticated")
            let one = try await ticket()
            #expect(try await client.call(.get, "/v1/events?ticket=\(one)&ticket=\(one)").code == "unauthenticated")
            // Making one needs the access token itself.
            #expect(try await client.call(.post, "/v1/events/tickets", tenant: tenant).code == "unauthenticated")
        }
    }

    @Test func anAccessTokenHasAtMostTwentyTicketsWaiting() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("eager", tenant: tenant)
            for _ in 0..<20 {
                #expect(try await client.call(.post, "/v1/events/tickets", token: account.accessToken).status == .created)
            }
            let refused = try await client.call(.post, "/v1/events/tickets", token: account.accessToken)
            #expect(refused.code == "rate_limited")
            #expect(refused.headers[.retryAfter] != nil)
            // Another session of the same user has its own.
            let login = try await client.call(.post, "/v1/auth/login", json: ["username": "eager", "password": account.password], tenant: tenant)
            let other = try login.decode(API.TokenResponse.self)
            #expect(try await client.call(.post, "/v1/events/tickets", token: other.accessToken).status == .created)
            #expect(try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM stream_tickets t JOIN tenants n ON n.id = t.tenant_id WHERE n.slug = \(tenant)", as: Int.self) == 21)
        }
    }
}
