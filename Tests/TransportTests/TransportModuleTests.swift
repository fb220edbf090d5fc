import Testing
@testable import Transport

@Test func TransportModuleIsNamed() { #expect(TransportModule.name == "Transport") }
