import Testing
@testable import MockAPNs

@Test func MockAPNsModuleIsNamed() { #expect(MockAPNsModule.name == "MockAPNs") }
