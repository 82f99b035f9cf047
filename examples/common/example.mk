# example.mk: the rules the four examples share; each example's Makefile
# sets MODEL (and COMMON_OBJS, the ../common files beyond cora.c that its
# main.c needs) and includes this file.
#
#   make                  compile $(MODEL).gnn and main.c, link build-$(TARGET)/$(MODEL)
#   make run              run it from here: Cora from ../../data/cora (ARGS= passes
#                         DATA_DIR and WEIGHTS instead)
#   make clean            remove build-cpu/, build-cuda/ and build-cuda-emu/
#   make TARGET=cpu       (or cuda) choose the target; by default cuda when
#                         `nvidia-smi -L` finds a GPU, else cpu
#   make TARGET=cuda-emu  the cuda target's code on the emulated device
#                         (gnncc --emulate: runs on the CPU, CUDA semantics
#                         checked; docs/emulator.md)
#   make GNNCC=/path/to/gnncc     another compiler (an installed one)
#   make GNNCCFLAGS=--arch=native more gnncc flags (-fopenmp for cpu needs
#                                 LDFLAGS=-fopenmp too; --vendor=cublas links
#                                 cuBLAS, or its emulation for cuda-emu)
#
# Design: everything a target builds goes to build-$(TARGET)/, so the cpu
# and cuda builds never mix and switching TARGET rebuilds nothing.  The
# model compiles with a pattern rule, like a .c file; gnncc -MD writes
# build-$(TARGET)/$(MODEL).d naming the model, every file it imports and gnncc
# itself, so touching any of them recompiles the model (-MP: a file that
# disappears from the list is no error), and the C compiler's -MMD -MP
# does the same for main.c's headers.  main.o waits for $(MODEL).o, whose
# compile writes the $(MODEL).h that main.c includes.  gnncc says where gnnrt.h
# is (--print-cflags) and what to link (--print-link-flags: libgnnrt.a,
# and for cuda the static CUDA runtime, so the program does not need
# libcudart.so); the link is done by $(CC).

GNNCC ?= ../../build/gnncc
TARGET ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo cuda || echo cpu)
TARGET := $(TARGET)
ifeq ($(filter cpu cuda cuda-emu,$(TARGET)),)
$(error TARGET must be cpu, cuda or cuda-emu, not '$(TARGET)')
endif
# gnncc's spelling of the target
GNNCC_TARGET = $(if $(filter cuda-emu,$(TARGET)),--target=cuda --emulate,--target=$(TARGET))
GNNCCFLAGS ?=
CFLAGS ?= -O2 -Wall -Wextra -Wpedantic
COMMON = ../common
OUT = build-$(TARGET)
BIN = $(OUT)/$(MODEL)

# recursive: gnncc runs only when a recipe needs these
GNNRT_CFLAGS = $(shell $(GNNCC) --print-cflags)
GNNRT_LIBS = $(shell $(GNNCC) --print-link-flags $(GNNCC_TARGET) $(filter --vendor=%,$(GNNCCFLAGS)))
ALL_CFLAGS = -std=c11 $(CFLAGS) -I$(OUT) -I$(COMMON) $(GNNRT_CFLAGS)

.PHONY: all run clean
all: $(BIN)

$(BIN): $(OUT)/main.o $(OUT)/cora.o $(patsubst %,$(OUT)/%.o,$(COMMON_OBJS)) $(OUT)/$(MODEL).o
	$(CC) $(LDFLAGS) -o $@ $^ $(GNNRT_LIBS) $(LDLIBS)

$(OUT)/%.o: %.gnn | $(OUT)
	$(GNNCC) $(GNNCC_TARGET) $(GNNCCFLAGS) $< -o $@ -MD -MP

# $<: an example may find main.c elsewhere by vpath (../pyg uses ../gcn's)
$(OUT)/main.o: main.c $(OUT)/$(MODEL).o | $(OUT)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/%.o: $(COMMON)/%.c | $(OUT)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(OUT):
	mkdir -p $@

run: $(BIN)
	./$(BIN) $(ARGS)

clean:
	rm -rf build-cpu build-cuda build-cuda-emu

-include $(wildcard $(OUT)/*.d)
