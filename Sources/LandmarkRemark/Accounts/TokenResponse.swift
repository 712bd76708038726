extension TokenResponse {
    /// The body of signup, login, refresh and every sign-in: the account and its new tokens.
    init(user: UserRecord, tokens: IssuedTokens) {
        self.init(
            user: User(id: user.id, username: user.username, email: user.email, createdAt: user.createdAt),
            accessToken: tokens.accessToken, expiresIn: tokens.expiresIn, refreshToken: tokens.refreshToken)
    }
}
