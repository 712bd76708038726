import Foundation

/// One upload's private directory: made with mode 0700 under the work directory, bound into
/// the sandbox as its only writable place, removed with everything in it afterwards.
struct JobDirectory {
    let path: String

    init(in parent: String) throws(PhotoError) {
        var template = Array((parent + "/photo-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .sandboxUnavailable("cannot make a job directory in \(parent): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    func write(_ name: String, _ bytes: [UInt8]) throws(PhotoError) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
        } catch {
            throw .sandboxUnavailable("cannot write the job's input: \(error)")
        }
    }

    func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path + "/" + name).map { [UInt8]($0) }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
