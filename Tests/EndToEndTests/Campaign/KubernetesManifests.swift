import Foundation
import Testing
import TestSupport

/// The Kubernetes manifests under jobs/kubernetes/, read as Kubernetes would: each YAML document
/// deserialized strictly into the official Python client's models (PyPI `kubernetes`), which
/// refuses a wrong type or a missing required field; a field the model does not have is refused
/// too (the client's own deserializer would drop it silently, as a typo in a manifest would be).
enum KubernetesManifests {
    static let directory = SourceTree.root().appendingPathComponent("jobs/kubernetes")

    /// Which model each apiVersion and kind deserializes into.
    private static let checker = """
        import json, sys, yaml
        import kubernetes.client as k
        from kubernetes.client import ApiClient

        MODELS = {("v1", "ConfigMap"): "V1ConfigMap", ("batch/v1", "Job"): "V1Job", ("batch/v1", "CronJob"): "V1CronJob"}
        SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object, "bytes": str}

        def strict(data, kind, path):
            # Older clients spell containers list[T] and dict(str, T); newer ones List[T], Dict[str, T].
            if kind.lower().startswith("list["):
                if not isinstance(data, list): sys.exit(f"{path}: not a list ({kind})")
                for i, item in enumerate(data): strict(item, kind[5:-1], f"{path}[{i}]")
            elif kind.lower().startswith(("dict(", "dict[")):
                if not isinstance(data, dict): sys.exit(f"{path}: not a map ({kind})")
                inner = kind[5:-1].split(", ", 1)[1]
                for key, value in data.items(): strict(value, inner, f"{path}.{key}")
            elif kind in SCALARS:
                if not isinstance(data, SCALARS[kind]) or (kind == "int" and isinstance(data, bool)):
                    sys.exit(f"{path}: {data!r} is not {kind}")
            else:
                model = getattr(k, kind)
                if not isinstance(data, dict): sys.exit(f"{path}: not an object ({kind})")
                fields = {json_name: attr for attr, json_name in model.attribute_map.items()}
                for key, value in data.items():
                    if key not in fields: sys.exit(f"{path}.{key}: {kind} has no such field")
                    strict(value, model.openapi_types[fields[key]], f"{path}.{key}")

        class Response:
            def __init__(self, doc): self.data = json.dumps(doc)

        out = []
        for name in sys.argv[1:]:
            for index, doc in enumerate(yaml.safe_load_all(open(name))):
                if doc is None: continue
                kind = MODELS.get((doc.get("apiVersion"), doc.get("kind")))
                if kind is None: sys.exit(f"{name}: document {index + 1}: unexpected {doc.get('apiVersion')} {doc.get('kind')}")
                strict(doc, kind, f"{name}: document {index + 1}")
                # Required fields and types, by the client's own models: pydantic ones (client 35 on)
                # validate in from_dict; older ones in their constructors, which deserialize calls.
                model = getattr(k, kind)
                if hasattr(model, "from_dict"):
                    model.from_dict(doc)
                else:
                    ApiClient().deserialize(Response(doc), kind)
                out.append({"file": name.rsplit("/", 1)[-1], "doc": doc})
        print(json.dumps(out))
        """

    /// Every document of `files` (names under jobs/kubernetes/), checked, as JSON objects with
    /// the file they came from.
    static func load(_ files: [String]) throws -> [(file: String, doc: [String: Any])] {
        let paths = files.map { directory.appendingPathComponent($0).path }
        let result = try Command.run("/usr/bin/env", ["python3", "-c", checker] + paths)
        try #require(result.status == 0, "the manifests are not valid Kubernetes objects: \(result.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return list.compactMap { entry in
            guard let file = entry["file"] as? String, let doc = entry["doc"] as? [String: Any] else { return nil }
            return (file, doc)
        }
    }

    /// `doc[path...]`, through maps and (by index) lists.
    static func value(_ doc: Any?, _ path: Any...) -> Any? {
        var current = doc
        for step in path {
            if let key = step as? String { current = (current as? [String: Any])?[key] }
            if let index = step as? Int {
                guard let list = current as? [Any], index < list.count else { return nil }
                current = list[index]
            }
        }
        return current
    }

    /// A container's args as a `sh -c` script, expanded as the kubelet expands them: each
    /// `$(NAME)` from the environment (here the shell's, so the test's JOB_COMPLETION_INDEX), the
    /// rest literal. `rewrite` maps the container's paths to the test's.
    static func shellCommand(executable: String, args: [String], rewrite: (String) -> String) -> String {
        let quoted = args.map { arg -> String in
            var text = ""
            var rest = Substring(rewrite(arg))
            while let start = rest.range(of: "$(") {
                text += escape(rest[..<start.lowerBound])
                guard let end = rest[start.upperBound...].firstIndex(of: ")") else {
                    rest = rest[start.lowerBound...]
                    break
                }
                text += "${" + rest[start.upperBound..<end] + "}"
                rest = rest[rest.index(after: end)...]
            }
            return "\"" + text + escape(rest) + "\""
        }
        return "exec " + (["\"" + escape(executable[...]) + "\""] + quoted).joined(separator: " ")
    }

    private static func escape(_ text: Substring) -> String {
        var out = ""
        for character in text {
            if "\\\"`$".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
