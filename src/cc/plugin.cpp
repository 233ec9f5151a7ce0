// SPDX-License-Identifier: MIT
/*
 * libstrobe-cc.so, the clang plugin of `strobe cc`: registers strobe's two
 * passes with LLVM 14's new pass manager, at every optimization level, -O0
 * included:
 *   - the blame analysis (blame.cpp, docs/blame.md), at the start of the
 *     pipeline, on the IR as clang emitted it, when STROBE_CC_BLAME is set;
 *   - the basic-block and memory tracing of --trace=bb[,mem], at the end
 *     (so it instruments the optimized code, after inlining). The
 *     transformation itself is C on the LLVM-C API (pass.c).
 * This file only connects them.
 *
 * The level comes from the environment variable STROBE_CC_TRACE ("bb" or
 * "bb,mem"), which `strobe cc` sets for the compiler: clang parses -mllvm
 * options before it loads pass plugins, so an option of the plugin would
 * be rejected as unknown.
 */
#include <cstdlib>
#include <cstring>

#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Mem2Reg.h"

#include "cc/blame.h"
#include "cc/pass.h"

namespace
{

struct StrobeBlocksPass : llvm::PassInfoMixin<StrobeBlocksPass> {
    unsigned level;
    explicit StrobeBlocksPass(unsigned l) : level(l)
    {
    }
    llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &)
    {
        if (strobe__cc_instrument(llvm::wrap(&m), level) == 0)
            return llvm::PreservedAnalyses::all();
        return llvm::PreservedAnalyses::none();
    }
    // run on optnone functions too: at -O0 every function is optnone
    static bool isRequired()
    {
        return true;
    }
};

// Only reads the module, then appends its blame table as module assembly.
struct StrobeBlamePass : llvm::PassInfoMixin<StrobeBlamePass> {
    const char *setting;
    explicit StrobeBlamePass(const char *s) : setting(s)
    {
    }
    llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &)
    {
        int rc = strobe__cc_blame(llvm::wrap(&m), setting);
        if (rc != 0)
            llvm::errs() << "strobe: cc: blame: " << setting << ": " << std::strerror(-rc) << "\n";
        return llvm::PreservedAnalyses::all();
    }
    static bool isRequired()
    {
        return true;
    }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo()
{
    return {LLVM_PLUGIN_API_VERSION, "strobe-cc", "1", [](llvm::PassBuilder &pb) {
                pb.registerPipelineStartEPCallback([](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
                    const char *setting = std::getenv(STROBE_CC_BLAME_VAR);
                    if (setting && *setting && std::strcmp(setting, "0") != 0)
                        mpm.addPass(StrobeBlamePass(setting));
                });
                pb.registerOptimizerLastEPCallback(
                    [](llvm::ModulePassManager &mpm, llvm::OptimizationLevel o) {
                        unsigned level = strobe__cc_level(std::getenv("STROBE_CC_TRACE"));
                        if (!level)
                            return;
                        mpm.addPass(StrobeBlocksPass(level));
                        // the functions' copies of the cursor into registers
                        // (pass.c); at -O0 they stay on the stack, as the
                        // program's own variables do
                        if (o != llvm::OptimizationLevel::O0)
                            mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::PromotePass()));
                    });
            }};
}
