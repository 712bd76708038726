import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

/// What confirms a sensitive change (a new password, linking or unlinking a sign-in method,
/// deleting the account).
public enum AccountConfirmation: Sendable, Hashable {
    /// The current password.
    case password(String)
    /// A fresh ID token (at most 5 minutes old) of one of the account's identities: sign the
    /// user in with the provider again to get one.
    case idToken(provider: String, token: String, nonce: String? = nil)
    /// Nothing: only a guest, which has neither a password nor an identity.
    case none

    var schema: Components.Schemas.Confirmation {
        switch self {
        case .password(let password): .init(password: password)
        case .idToken(let provider, let token, let nonce): .init(provider: .init(value1: provider), id_token: token, nonce: nonce)
        case .none: .init()
        }
    }
}

extension LandmarkRemark {
    /// The signed-in user's own account, with counts and sign-in methods.
    public func me() async throws -> Me {
        try await Self.perform { Me(try await api.getMe().ok.body.json) }
    }

    /// Sets the account's email.
    @discardableResult
    public func updateEmail(_ email: String) async throws -> Me {
        try await Self.perform { Me(try await api.updateMe(body: .json(.init(email: email))).ok.body.json) }
    }

    /// A new password; ends every other session of the user. A guest passes `.none` (and
    /// stops being a guest); an account without a password confirms with an ID token.
    @discardableResult
    public func setPassword(_ new: String, confirmedBy confirmation: AccountConfirmation) async throws -> Me {
        try await Self.perform {
            var body = Components.Schemas.UpdateMeRequest()
            switch confirmation {
            case .password(let current): body.password = .init(current: current, new: new)
            case .idToken(let provider, let token, let nonce):
                body.password = .init(new: new)
                (body.provider, body.id_token, body.nonce) = (.init(value1: provider), token, nonce)
            case .none: body.password = .init(new: new)
            }
            return Me(try await api.updateMe(body: .json(body)).ok.body.json)
        }
    }

    /// Adds a sign-in method: an identity from an ID token (and, for Apple, its authorization
    /// code, which lets the service revoke Apple's tokens when the account is deleted).
    @discardableResult
    public func linkIdentity(
        idToken: String, provider: String, nonce: String? = nil, authorizationCode: String? = nil,
        confirmedBy confirmation: AccountConfirmation
    ) async throws -> Me {
        try await Self.perform {
            let body = Components.Schemas.LinkIdentityRequest(
                provider: provider, id_token: idToken, nonce: nonce, authorization_code: authorizationCode,
                confirm: confirmation == .none ? nil : .init(value1: confirmation.schema))
            let output = try await api.linkIdentity(body: .json(body))
            if case .ok(let ok) = output { return Me(try ok.body.json) }
            return Me(try output.created.body.json)
        }
    }

    /// Removes a sign-in method (not the account's last).
    public func unlinkIdentity(provider: String, confirmedBy confirmation: AccountConfirmation) async throws {
        _ = try await Self.perform {
            try await api.unlinkIdentity(path: .init(provider: provider), body: .json(confirmation.schema)).noContent
        }
    }

    /// Deletes the account (notes, sessions, identities) and signs out. Apps must offer this
    /// (App Store rule 5.1.1(v)); a guest passes `.none`.
    public func deleteAccount(confirmedBy confirmation: AccountConfirmation) async throws {
        _ = try await Self.perform { try await api.deleteMe(body: .json(confirmation.schema)).noContent }
        await session.signOut()
    }
}
