import Testing
@testable import APNs

@Test func APNsModuleIsNamed() { #expect(APNsModule.name == "APNs") }
