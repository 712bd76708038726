import Foundation
@testable import Postgres
import Testing

/// The migrator runs a file statement by statement (`SQLScript`): split at each `;` outside
/// quotes, dollar quotes and comments, as psql splits a file.
@Suite struct SQLScriptTests {
    @Test func splitsAtSemicolonsOutsideQuotesAndComments() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (x text DEFAULT 'it''s; here', "we;ird" int);
            /* a block; /* nested; */ comment */
            SELECT E'a \\' quote; still', 'plain\\'; -- the backslash ends nothing here
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;
            CREATE FUNCTION g(int) RETURNS int LANGUAGE sql AS $body$ SELECT $1; $body$;
            DO $q$ BEGIN PERFORM 1; END $q$;
            SELECT 1
            -- the end
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 6, "\(statements)")
        #expect(statements[0].hasSuffix("\"we;ird\" int)"))
        #expect(statements[1].hasPrefix("/* a block") && statements[1].hasSuffix("'plain\\'"))
        #expect(statements[2].hasSuffix("END $$"))
        #expect(statements[3].hasSuffix("$body$"))
        #expect(statements[4] == "DO $q$ BEGIN PERFORM 1; END $q$")
        #expect(statements[5] == "SELECT 1\n-- the end" || statements[5] == "SELECT 1")
    }

    /// Every migration of the repository splits into statements PostgreSQL parses one by one
    /// (the tests migrate with them), and a file of comments alone into none.
    @Test func commentsAloneAreNoStatement() {
        #expect(SQLScript.statements("-- nothing here\n\n-- at all\n").isEmpty)
        #expect(SQLScript.statements("SELECT 1;;\n;").count == 1)
    }
}
