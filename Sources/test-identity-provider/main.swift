// Placeholder; the fake identity provider's command lands in the next commit.
print("test-identity-provider: not built yet")
