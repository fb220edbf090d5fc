import Testing
@testable import Pipeline

@Test func PipelineModuleIsNamed() { #expect(PipelineModule.name == "Pipeline") }
