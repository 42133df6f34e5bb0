@echo off
REM The dynamic-provider plugin on Windows, where a project's Pulumi.yaml names this directory: it starts the host
REM as pulumi's own launcher does (the faster start of the sh launcher beside this file is for Linux and macOS).
setlocal
for /f "delims=" %%i in ('node -e "console.log(require.resolve('@pulumi/pulumi/cmd/dynamic-provider'))"') do set "SCRIPT_PATH=%%i"
if not defined SCRIPT_PATH exit /b 1
node "%SCRIPT_PATH%" %*
