// Placeholder; the fake identity provider lands in the next commit.
public enum IdentityProviderFakePlaceholder {}
